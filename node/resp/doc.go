// Package resp reads client requests and writes replies in the Redis
// serialization protocol, versions 2 and 3.
//
// Requests: Parser splits a byte stream into commands without copying. The
// multibulk form (what every client library sends) is parsed here with the
// bounds redis-server enforces (proto-max-bulk-len, header sizes, the
// multibulk count); inline commands (telnet style) go through redcon's
// parser. A returned command's arguments point into the caller's buffer and
// are valid only until the buffer is reused: copy what you keep.
//
// Replies: Writer appends to a byte slice with redcon's encoders and adds
// the RESP3 types (maps, sets, doubles, booleans, nulls, verbatim strings,
// pushes), each falling back to the RESP2 shape redis-server uses when the
// connection speaks version 2.
package resp
