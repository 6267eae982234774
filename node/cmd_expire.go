package node

func registerExpire(t Table) {}
