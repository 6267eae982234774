package node

func registerCommandCmd(t Table) {}
