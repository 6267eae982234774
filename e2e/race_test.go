//go:build race

package e2e

// raceEnabled makes the tests build slotd with -race when they run with
// -race themselves, so the real server paths are checked too.
const raceEnabled = true
