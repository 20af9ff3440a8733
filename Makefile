# The two commands of the README: `go run ./cmd/hcp-apiserver` starts a server,
# `make test` runs every test on a fresh machine (it installs what it needs).

GO ?= go
TEST_TIMEOUT ?= 60m
export PATH := $(PATH):/usr/sbin

.PHONY: all build version test test-deps verify vet unit fuzz bench codegen images clean

# The version the binaries report (/version, --version): git describe of the nearest v* tag
# (v0.3.0, v0.3.0-5-g0123abc), or v0.0.0-dev+<commit> before the first tag; semver either way, as
# kubectl requires of a server. Builds without these flags (go run) report the module's version.
GIT_VERSION ?= $(shell git describe --tags --match 'v[0-9]*' 2>/dev/null || echo "v0.0.0-dev+$$(git rev-parse --short HEAD 2>/dev/null || echo unknown)")
GIT_COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
GIT_TREE_STATE ?= $(shell test -z "$$(git status --porcelain --untracked-files=no 2>/dev/null)" && echo clean || echo dirty)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
VERSION_PKG := github.com/aro-hcp/hcp-apiserver/pkg/version
LDFLAGS := -X $(VERSION_PKG).gitVersion=$(GIT_VERSION) -X $(VERSION_PKG).gitCommit=$(GIT_COMMIT) \
	-X $(VERSION_PKG).gitTreeState=$(GIT_TREE_STATE) -X $(VERSION_PKG).buildDate=$(BUILD_DATE)

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o _output/bin/ ./cmd/...

version:
	@echo $(GIT_VERSION)

test: test-deps verify build
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...
	$(MAKE) fuzz

# The fuzz targets of what outside clients send, each fuzzed for FUZZ_TIME on top of its committed corpus
# (testdata/fuzz/ and its seeds); go test fuzzes one target at a time. A failure writes the input that
# failed into the package's testdata/fuzz/, to commit with the fix.
FUZZ_TIME ?= 30s
FUZZ_TARGETS := \
	./pkg/apiserver:FuzzRequestBody \
	./apis/hcp/validation:FuzzValidateRequest \
	./apis/hcp/validation:FuzzPlainARMID \
	./pkg/armshim/frontend:FuzzARMRequest \
	./pkg/armshim/conversion:FuzzClusterRequest \
	./pkg/armshim/conversion:FuzzNodePoolRequest \
	./pkg/armshim/conversion:FuzzExternalAuthRequest
fuzz:
	@for target in $(FUZZ_TARGETS); do \
		GO=$(GO) bash hack/fuzz.sh "$${target%%:*}" "$${target##*:}" $(FUZZ_TIME) || exit 1; \
	done

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

# Measures throughput and latency next to raw etcd, raw MQTT and the same resource as a CRD on
# kube-apiserver; see test/bench/README.md. The peer rounds take about 20 minutes and redraw the plot.
DELIVERY_ARGS ?= -bundles 1000 -clusters 100,1000
PEER_ARGS ?= -objects 1000,10000,100000 -plot ../peer-growth.svg
bench:
	$(GO) run ./test/bench $(BENCH_ARGS)
	$(GO) test -count=1 -timeout 60m -run 'TestDeliveryBenchmark|TestClusterBenchmark' -v ./test/bench/delivery -args $(DELIVERY_ARGS)
	$(GO) test -count=1 -timeout 90m -run TestCRDPeerBenchmark -v ./test/bench/peer -args $(PEER_ARGS)

# The container images of hcp-apiserver, maestro-agent and arm-shim (build/*.Dockerfile), with the version flags of
# build. Not part of test: it needs a container engine and pulls base images. An image tag takes no '+',
# which the version has before the first tag. The builder's Go is the minor version go.mod names.
IMAGE_REGISTRY ?=
IMAGE_TAG ?= $(subst +,-,$(GIT_VERSION))
CONTAINER_TOOL ?= docker
GO_IMAGE_VERSION ?= $(shell sed -n 's/^go \([0-9]*\.[0-9]*\).*/\1/p' go.mod)
IMAGE_BUILD_ARGS = --build-arg GO_VERSION=$(GO_IMAGE_VERSION) --build-arg GIT_VERSION=$(GIT_VERSION) \
	--build-arg GIT_COMMIT=$(GIT_COMMIT) --build-arg GIT_TREE_STATE=$(GIT_TREE_STATE) --build-arg BUILD_DATE=$(BUILD_DATE)
images:
	$(CONTAINER_TOOL) build -f build/hcp-apiserver.Dockerfile $(IMAGE_BUILD_ARGS) \
		-t $(if $(IMAGE_REGISTRY),$(IMAGE_REGISTRY)/)hcp-apiserver:$(IMAGE_TAG) .
	$(CONTAINER_TOOL) build -f build/maestro-agent.Dockerfile $(IMAGE_BUILD_ARGS) \
		-t $(if $(IMAGE_REGISTRY),$(IMAGE_REGISTRY)/)maestro-agent:$(IMAGE_TAG) .
	$(CONTAINER_TOOL) build -f build/arm-shim.Dockerfile $(IMAGE_BUILD_ARGS) \
		-t $(if $(IMAGE_REGISTRY),$(IMAGE_REGISTRY)/)arm-shim:$(IMAGE_TAG) .

clean:
	rm -rf _output hcp-data
