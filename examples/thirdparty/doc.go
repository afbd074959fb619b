// Package thirdparty certifies idempotency code that onceproof did not
// write: real middlewares from the Go module proxy, mounted on a small
// ticket handler, get the verdicts their documented behaviour deserves.
// Its tests are the only code; nothing here is linked into onceproof.
//
// It is a module of its own (go.mod here, with onceproof replaced by this
// repository), so that the middlewares and their dependencies (Fiber,
// fasthttp, go-retryablehttp) stay out of onceproof's go.mod. `make test`
// runs its tests: cd examples/thirdparty && go test -race ./...
//
// thirdparty imports nothing of onceproof's outside its tests.
package thirdparty
