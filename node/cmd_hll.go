package node

func registerHLL(t Table) {}
