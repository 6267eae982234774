// Package e2e holds the tests that start real binaries: slotd built from
// this tree, and redis-server 7 / redis-cli from the machine (installed by
// scripts/install-deps.sh).
//
//   - diff_test.go sends the scripts in testdata/diff to redis-server and
//     to slotd and compares every reply byte for byte.
//   - clients_test.go drives slotd with go-redis (RESP2 and RESP3) and
//     with redis-cli.
//
// Every process is started on a free loopback port, waited for with a
// deadline, and killed in t.Cleanup even when the test fails.
package e2e
