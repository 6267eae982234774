# slotd: build, test and benchmark entry points.
GO ?= go

.PHONY: build test vet e2e diff bench bench-cluster deps

build:
	$(GO) build -o bin/slotd ./cmd/slotd
	$(GO) build -o bin/slotctl ./cmd/slotctl

vet:
	$(GO) vet ./...

# Unit tests and e2e tests (real slotd, redis-server and redis-cli), all with
# the race detector. The e2e tests need scripts/install-deps.sh first.
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

# Only the tests that start real processes.
e2e:
	$(GO) test -count=1 ./e2e/

# The differential suite, one subtest per script: make diff RUN=strings
diff:
	$(GO) test -count=1 ./e2e/ -run 'TestDiff/$(RUN)'

# slotd side by side with redis-server; writes docs/BENCHMARKS.md.
# N=requests per test, GOMAXPROCS=... for slotd.
bench:
	bash scripts/bench.sh

deps:
	bash scripts/install-deps.sh

# A 3-master slotd cluster side by side with a 3-master redis-server cluster
# (redis-benchmark --cluster), and the bus cost of a 6-node slotd cluster.
bench-cluster:
	bash scripts/bench-cluster.sh
