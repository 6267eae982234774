//go:build !race

package node

// raceOn: see race_on_test.go.
const raceOn = false
