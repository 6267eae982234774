// Command slotctlshim stands in for slotctl in the redis-server variant of
// the docker test (SLOTD_E2E_TARGET=redis): it turns the slotctl command
// lines the compose file uses into redis-cli --cluster ones and execs
// /redis-cli, so that the compose file can be checked against real
// redis-server nodes.
package main

import (
	"fmt"
	"os"
	"syscall"
)

func main() {
	args := os.Args[1:]
	var cli []string
	switch {
	case len(args) >= 4 && args[0] == "create" && args[1] == "--yes" && args[2] == "--replicas":
		cli = append(append([]string{"--cluster", "create"}, args[4:]...), "--cluster-replicas", args[3], "--cluster-yes")
	case len(args) == 2 && args[0] == "check":
		cli = []string{"--cluster", "check", args[1]}
	default:
		fmt.Fprintf(os.Stderr, "slotctlshim: unsupported arguments %q\n", args)
		os.Exit(2)
	}
	err := syscall.Exec("/redis-cli", append([]string{"redis-cli"}, cli...), os.Environ())
	fmt.Fprintln(os.Stderr, "slotctlshim:", err)
	os.Exit(1)
}
