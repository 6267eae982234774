package node

// The <CMD> HELP replies keep redis-server's shape (an array of status
// lines: a header, then each subcommand's syntax on its own line followed by
// indented lines describing it, HELP last) and its facts (which subcommands
// and arguments exist), but the words are slotd's own.

// writeHelp replies with cmd's subcommand list: a header, lines (syntax
// lines and their indented descriptions) and the HELP entry.
func writeHelp(x *Ctx, cmd string, lines ...string) {
	x.W.Array(len(lines) + 3)
	x.W.Simple(cmd + " <subcommand> [<arg> ...] -- subcommands:")
	for _, l := range lines {
		x.W.Simple(l)
	}
	x.W.Simple("HELP")
	x.W.Simple("    Lists these subcommands.")
}
