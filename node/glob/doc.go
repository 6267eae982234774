// Package glob is redis-server's glob matcher (stringmatchlen), the one
// every pattern in slotd goes through: KEYS, the SCAN family's MATCH,
// CONFIG GET, COMMAND LIST FILTERBY PATTERN. Patterns come from clients,
// so a match costs at most O(len(pattern) x len(s)) steps whatever the
// number of stars. It imports nothing but the standard library.
package glob
