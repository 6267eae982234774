// Package node is the slotd server: it accepts client connections, parses
// requests, looks commands up in the command table, checks them (arity,
// authentication, transactions, and in cluster mode routing), locks the
// hash slots of their keys and runs them against the keyspace.
//
// Every connection has one goroutine that reads a batch of pipelined
// requests, runs them in order and writes all replies with one write. A
// command is atomic because the dispatcher holds the locks of all slots its
// keys hash to (see package keyspace) for the whole call; commands that see
// the whole keyspace hold every slot lock.
//
// Handlers live in cmd_*.go files, one per command family. A handler gets a
// *Ctx: its arguments (valid only during the call: copy what you keep), the
// reply writer, and helpers to read and write keys. Handlers never lock.
package node
