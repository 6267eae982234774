package keyspace

import "unsafe"

// An Arena makes the strings of one collection out of few allocations:
// they share chunks of bytes, which hold no pointers for the collector to
// scan. A chunk lives as long as any of its strings does, so chunks are
// small and long strings get allocations of their own.
type Arena struct {
	b    []byte
	next int // size of the next chunk
}

const arenaChunk = 1024

// NewArena returns an arena whose first chunk is about hint bytes (the
// size of a blob the strings come from; 0 when unknown). Each further
// chunk doubles, up to arenaChunk.
func NewArena(hint int) Arena {
	return Arena{next: min(max(hint, 32), arenaChunk)}
}

// Str returns a copy of p.
func (a *Arena) Str(p []byte) string {
	if len(p) == 0 {
		return ""
	}
	if len(p) > arenaChunk/4 {
		return string(p)
	}
	if cap(a.b)-len(a.b) < len(p) {
		a.b = make([]byte, 0, max(a.next, len(p)))
		a.next = min(2*cap(a.b), arenaChunk)
	}
	i := len(a.b)
	a.b = append(a.b, p...)
	return unsafe.String(&a.b[i], len(p))
}
