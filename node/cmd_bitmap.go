package node

func registerBitmaps(t Table) {}
