package node

// Reply texts shared by many commands, exactly as redis-server 7.0 words them.
const (
	ErrWrongType      = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrSyntax         = "ERR syntax error"
	ErrNotInt         = "ERR value is not an integer or out of range"
	ErrNotFloat       = "ERR value is not a valid float"
	ErrOverflow       = "ERR increment or decrement would overflow"
	ErrNoSuchKey      = "ERR no such key"
	ErrIndexRange     = "ERR index out of range"
	ErrNoAuth         = "NOAUTH Authentication required."
	ErrWrongPass      = "WRONGPASS invalid username-password pair or user is disabled."
	ErrDBIndex        = "ERR DB index is out of range"
	ErrInvalidExpire  = "ERR invalid expire time in '%s' command"
	ErrOOM            = "OOM command not allowed when used memory > 'maxmemory'."
	ErrMaxClients     = "ERR max number of clients reached"
	ErrNestedMulti    = "ERR MULTI calls can not be nested"
	ErrExecNoMulti    = "ERR EXEC without MULTI"
	ErrDiscardNoMulti = "ERR DISCARD without MULTI"
	ErrExecAbort      = "EXECABORT Transaction discarded because of previous errors."
	ErrWatchInMulti   = "ERR WATCH inside MULTI is not allowed"
	ErrBitOffset      = "ERR bit offset is not an integer or out of range"
	ErrStringTooLong  = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
)

// errArity returns the wrong-arity error for a command ("get", "config|get").
func errArity(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}
