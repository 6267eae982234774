//go:build race

package node

// raceOn: the tests run under the race detector, which slows every command
// several times over; wall-clock latency limits are reported, not checked.
const raceOn = true
