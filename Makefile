# onceproof — common tasks. The README's two commands need none of this.
GO ?= go

.PHONY: all build test race vet fmt bench soak demo ci clean

all: vet test

build:
	CGO_ENABLED=0 $(GO) build -o bin/onceproof ./cmd/onceproof
	CGO_ENABLED=0 $(GO) build -o bin/onceproof-fixture ./cmd/onceproof-fixture

test:
	$(GO) test -race ./...

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)

fmt:
	gofmt -w $$(git ls-files '*.go')

# Speed targets: trials/second per scenario against the correct fixture, and
# the ratio to the floor (the same number of bare loopback HTTP requests).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The fixture verdicts, repeated: every fixture must get its documented
# verdicts every time.
soak:
	ONCEPROOF_SOAK=50 $(GO) test -race -run 'TestFixtureVerdicts' -count=1 -timeout 60m ./scenarios/

demo:
	$(GO) run ./cmd/onceproof demo

ci:
	bash .ci/run

clean:
	rm -rf bin
