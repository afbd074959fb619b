// Package stdio is the transport of MCP servers that speak over stdio:
// onceproof starts the server's command (in its own process group, killed
// with it: no orphans, signals included) and calls one of its tools with
// tools/call lines on its stdin.
//
// The faults are real proxy faults. Each server process has a loopback
// bridge in front of it; the harness's fault proxy forwards to it, and the
// bridge writes the whole lines a connection brings to the process's stdin
// and sends the process's answers back on the connection their request came
// on (by JSON-RPC id). So a lost response is an answer the server wrote
// that the caller never gets, after which the caller retries on the same
// process or, as a real client after a broken pipe, on a restarted one
// ([Tool.Renew]: scenarios draw which, the attempt log says which); a
// request the proxy stops never reaches the process; a torn one reaches it
// cut short and its stdin closes, as when a client dies mid-write (the
// retry goes to a new process); identical calls held and released together
// reach one process's stdin at once, or several processes (a tool runs
// [DefaultProcesses] side by side, sharing the server's store: the stdio
// form of replicas, as every agent session starts its own server); a crash
// kills a process (SIGKILL to its group) after it committed, and the
// command starts again. Every attempt id has ten digits, so every attempt
// of a call writes the same number of bytes ([harness.Call.Wire]). The
// tail of the servers' standard error is kept for the report
// ([Tool.Log]).
//
// [Kind] is its row in the transport table; [Script] its reproducer: a
// bash script that replays the attempts over the server's own stdin
// (named pipes), no proxy needed.
//
// Adding this transport took this package and one row in spec.Transports
// (see package transport).
//
// Imports: the standard library, the MCP Go SDK (its types), harness,
// harness/mcp, harness/transport, harness/report and harness/repro.
package stdio
