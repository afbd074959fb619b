// Package thirdparty certifies idempotency code that onceproof did not
// write: real middlewares from the Go module proxy, mounted on a small
// ticket handler, get the verdicts their documented behaviour deserves.
// Its tests are the only code; nothing here is linked into onceproof.
//
// thirdparty imports nothing of onceproof's outside its tests.
package thirdparty
