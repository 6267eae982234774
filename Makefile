# slotd: build, test and benchmark entry points.
GO ?= go

.PHONY: slotctl-on-slotd build test vet e2e diff fuzz bench bench-aof bench-cluster bench-failover bench-persist deps cluster cluster-stop cluster-e2e docker


build:
	$(GO) build -o bin/slotd ./cmd/slotd
	$(GO) build -o bin/slotctl ./cmd/slotctl

vet:
	$(GO) vet ./...

# Unit tests and e2e tests (real slotd, redis-server and redis-cli), all with
# the race detector. The e2e tests need scripts/install-deps.sh first.
test: deps
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 45m ./...
	$(GO) test -count=1 -run 'TestPollerServesInArrivalOrder' -v ./node
	$(MAKE) slotctl-on-slotd

# slotctl's own tests start redis-server nodes by default; this runs the
# ones that need no replication against slotd nodes as well.
slotctl-on-slotd:
	$(GO) build -o bin/slotd ./cmd/slotd
	SLOTCTL_TEST_NODE=$(CURDIR)/bin/slotd $(GO) test -count=1 \
		-run 'TestBinaryCreateAndCheck|TestBinaryConfirm|TestCreateSixMasters|TestInfoCountsKeys|TestAddAndDelNode|TestCheckFindsProblems|TestPassword' \
		./cmd/slotctl/internal/ctl

# Only the tests that start real processes.
e2e:
	$(GO) test -count=1 ./e2e/

# Only the cluster tests (real nodes, redis-cli --cluster, go-redis and
# redis-py cluster clients, scripts/cluster.sh, docker compose). They are
# part of `test` too. SLOTD_E2E_TARGET=redis runs them on redis-server.
cluster-e2e:
	$(GO) test -count=1 ./e2e/ -run 'TestCluster' -v

# A local six-node cluster on 127.0.0.1:7000-7005 (see scripts/cluster.sh).
cluster:
	bash scripts/cluster.sh start

cluster-stop:
	bash scripts/cluster.sh stop

# The FROM scratch image for docker/compose.yml.
docker:
	bash docker/build.sh

# The differential suite, one subtest per script: make diff RUN=strings
diff:
	$(GO) test -count=1 ./e2e/ -run 'TestDiff/$(RUN)'

# Every go test -fuzz target in turn: make fuzz FUZZTIME=2m ONLY=Parser
fuzz:
	bash scripts/fuzz.sh

# slotd side by side with redis-server; writes docs/BENCHMARKS.md.
# N=requests per test, GOMAXPROCS=... for slotd.
bench:
	bash scripts/bench.sh

# SET throughput with appendonly yes, appendfsync everysec, side by side
# with redis-server; writes docs/BENCHMARKS-aof.md.
bench-aof:
	bash scripts/bench-aof.sh

deps:
	bash scripts/install-deps.sh

# Snapshots side by side with redis-server on 1,000,000 keys of mixed
# types: SAVE, BGSAVE (time, extra memory), load at start, file size;
# writes docs/BENCHMARKS-persistence.md. KEYS=... REPS=...
bench-persist:
	bash scripts/bench-persist.sh

# A 3-master slotd cluster side by side with a 3-master redis-server cluster
# (redis-benchmark --cluster), and the bus cost of a 6-node slotd cluster.
bench-cluster:
	bash scripts/bench-cluster.sh

# Failover unavailability, slotd and redis-server clusters side by side
# (docs/BENCHMARKS-failover.md): a few minutes. ROUNDS kills each.
ROUNDS ?= 5
bench-failover:
	SLOTD_E2E_FAILOVER=1 SLOTD_E2E_FAILOVER_ROUNDS=$(ROUNDS) $(GO) test -count=1 -timeout 40m \
		-run TestFailoverUnavailability -v ./e2e/
