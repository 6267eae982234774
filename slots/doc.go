// Package slots owns the mapping from keys to the 16384 cluster hash slots
// and the small value types that describe sets of slots.
//
// A key's slot is CRC16/XMODEM of the key, or of its hash tag, modulo 16384.
// The hash tag is the part between the first '{' and the next '}' when that
// part is non-empty; it lets callers place related keys in one slot.
//
// The package has no state and imports only the standard library and the
// CRC16 implementation; every other package may use it.
package slots
