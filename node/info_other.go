//go:build !linux

package node

import "runtime"

// osName is INFO's os field; uname(2) is read on Linux only.
func osName() string { return runtime.GOOS + " " + runtime.GOARCH }

// totalSystemMemory is INFO's total_system_memory, 0 where it is not read.
func totalSystemMemory() int64 { return 0 }
