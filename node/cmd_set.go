package node

func registerSets(t Table) {}
