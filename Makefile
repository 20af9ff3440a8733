# The two commands of the README: `go run ./cmd/hcp-apiserver` starts a server,
# `make test` runs every test on a fresh machine (it installs what it needs).

GO ?= go
TEST_TIMEOUT ?= 60m
export PATH := $(PATH):/usr/sbin

.PHONY: all build test test-deps verify vet unit bench codegen clean

all: build

build:
	$(GO) build -o _output/bin/ ./cmd/...

test: test-deps verify build
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# Debian packages (protoc, Mosquitto), then kube-apiserver and etcd built from the module
# proxy into _output/tools/ (the first time about 15 minutes; cached afterwards).
test-deps:
	bash hack/install-test-deps.sh
	bash hack/build-test-tools.sh

verify: vet
	bash hack/verify-codegen.sh
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

vet:
	$(GO) vet ./...

codegen:
	bash hack/update-codegen.sh

# Measures throughput and latency next to raw etcd; see test/bench/README.md.
DELIVERY_ARGS ?= -bundles 1000 -clusters 100,1000
bench:
	$(GO) run ./test/bench $(BENCH_ARGS)
	$(GO) test -count=1 -timeout 60m -run 'TestDeliveryBenchmark|TestClusterBenchmark' -v ./test/bench/delivery -args $(DELIVERY_ARGS)

clean:
	rm -rf _output hcp-data
