// Package capture is an HTTP endpoint that records every request it gets
// (time, method, path, Idempotency-Key, body, connection) and answers each
// as its Answerer says: a committed write, a lost response, a reset, a
// status. The client certification plays a server with it, and the
// downstream scenario a tool's provider. It imports only the standard
// library.
package capture
