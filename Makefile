# onceproof — common tasks. `make test` is the README's test command.
GO ?= go

# No registry here: testcontainers must not start its reaper (its image would
# be pulled). onceproof finds where a container's ports are published by
# itself (harness/container: inside a container too); the override is for
# the tests that drive testcontainers' own postgres and redis modules
# (cmd/onceproof-images), whose detection picks the default route here.
export TESTCONTAINERS_RYUK_DISABLED := true
ifneq ($(wildcard /.dockerenv),)
export TESTCONTAINERS_HOST_OVERRIDE ?= 127.0.0.1
endif

.PHONY: all build test deps images vet fmt bench soak fuzz demo ci clean release-tools release-snapshot

all: vet test

build:
	CGO_ENABLED=0 $(GO) build -o bin/onceproof ./cmd/onceproof
	CGO_ENABLED=0 $(GO) build -o bin/onceproof-fixture ./cmd/onceproof-fixture

# Installs the Debian packages the tests need (when missing), builds the
# images the container tests run, then runs every test: the module's, then
# examples/thirdparty's (its own module, so that Fiber and fasthttp stay out
# of onceproof's go.mod).
test: images
	$(GO) test -race -timeout 30m ./...
	cd examples/thirdparty && $(GO) test -race -timeout 30m ./...

deps:
	bash .ci/deps

vet:
	$(GO) vet ./...
	cd examples/thirdparty && $(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)

fmt:
	gofmt -w $$(git ls-files '*.go')

# Speed: what users run. `onceproof certify` of the shipped example spec
# (timeout 2s, 100 checks, default backoff) against the correct fixture
# through the CLI, with wall seconds per tool, trials per second and the
# ratio to the bare-network floor measured in the same run; the demo; and the
# embedded against the container Toxiproxy.
bench: images
	$(GO) test -run '^$$' -bench 'BenchmarkCertifyExample|BenchmarkDemo|BenchmarkChaos' -benchtime 3x -benchmem ./cmd/onceproof/
	$(GO) test -run '^$$' -bench 'BenchmarkToxiproxyModes' -benchtime 2x -benchmem ./scenarios/

# The fixture verdicts, repeated: every fixture must get its documented
# verdicts every time.
soak: images
	ONCEPROOF_SOAK=50 $(GO) test -race -run 'TestFixtureVerdicts|TestCrashRestartCatchesMemoryDedupeEveryRun|TestClientWrapperVerdicts' -count=1 -timeout 120m ./scenarios/
	$(GO) test -race -run 'TestMCPFixtureVerdicts|TestStdioFixtureVerdicts|TestStdioMemoryKeysWithOneProcess|TestContainerFixtureVerdicts|TestLongRunningFixtureVerdicts|TestLookupFixtureVerdicts' -count=20 -timeout 120m ./scenarios/

# The spec loader under go test -fuzz for FUZZTIME (default 5m), seeded with
# testdata/bad, the examples and the golden specs (which plain go test runs
# too). Findings land in harness/testdata/fuzz/FuzzParseSpec: commit the ones
# that were fixed, as regression seeds.
FUZZTIME ?= 5m
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseSpec$$' -fuzztime $(FUZZTIME) ./harness/

demo:
	$(GO) run ./cmd/onceproof demo

ci:
	bash .ci/run

clean:
	rm -rf bin dist

# The release, built locally and published nowhere: archives for
# linux/darwin/windows × amd64/arm64 with LICENSE and README, their SHA-256
# checksums, a CycloneDX SBOM per archive and the CLI image (amd64 and arm64)
# in the local Docker engine, all under dist/ (see .goreleaser.yaml). The
# tools come from the Go module proxy, at pinned versions.
GORELEASER_VERSION ?= v2.15.1
CYCLONEDX_GOMOD_VERSION ?= v1.10.0
TOOLS := $(CURDIR)/bin/tools

release-tools:
	GOBIN=$(TOOLS) $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)
	GOBIN=$(TOOLS) $(GO) install github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$(CYCLONEDX_GOMOD_VERSION)

release-snapshot: release-tools
	mkdir -p bin/image && cp /etc/ssl/certs/ca-certificates.crt bin/image/
	PATH="$(TOOLS):$$PATH" DOCKER_BUILDKIT=0 ONCEPROOF_ROOT="$(CURDIR)" goreleaser release --snapshot --clean

# Build every container image the project uses, locally (no registry needed);
# fast when nothing changed.
images: deps
	$(GO) run ./cmd/onceproof-images
