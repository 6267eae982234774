package node

func registerZSets(t Table) {}
