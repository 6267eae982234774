// Package repl holds the pure parts of replication: the backlog ring that
// keeps the last bytes of the replication stream, and the rule that decides
// whether a PSYNC can continue from it or needs a full resynchronisation.
//
// Offsets follow redis-server's numbering: the stream's bytes are numbered
// from 1, a node's replication offset is the number of bytes it has
// produced (a master) or processed (a replica), and a replica asks to
// continue with PSYNC <replid> <its offset + 1>, the first byte it lacks.
//
// The package opens no socket and starts no goroutine; the caller
// serialises access to a Backlog.
package repl
