// Package e2e holds the tests that start real binaries: slotd built from
// this tree, and redis-server 7 / redis-cli from the machine (installed by
// scripts/install-deps.sh).
//
//   - diff_test.go sends the scripts in testdata/diff to redis-server and
//     to slotd and compares every reply byte for byte.
//   - clients_test.go drives slotd with go-redis (RESP2 and RESP3) and
//     with redis-cli.
//   - cluster_test.go starts cluster-enabled nodes on fixed port pairs
//     (P, bus P+10000) and drives them with redis-cli --cluster, redis-cli
//     -c, go-redis's ClusterClient and redis-py's RedisCluster;
//     cluster_script_test.go runs scripts/cluster.sh and
//     cluster_docker_test.go the docker compose cluster.
//
// Every process is started on a free loopback port, waited for with a
// deadline, and killed in t.Cleanup even when the test fails.
package e2e
