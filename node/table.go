package node

// buildTable collects every command family's registrations.
func buildTable() Table {
	t := Table{}
	for _, register := range []func(Table){
		registerConn,
		registerMulti,
		registerStrings,
		registerBitmaps,
		registerHLL,
		registerKeys,
		registerExpire,
		registerLists,
		registerHashes,
		registerSets,
		registerZSets,
		registerServer,
		registerClient,
		registerCommandCmd,
		registerCluster,
		registerSort,
		registerRepl,
		registerMigrateChunk,
		registerDump,
	} {
		register(t)
	}
	applyMeta(t)
	return t
}
