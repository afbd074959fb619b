// Package faults injects network faults between a caller and a write tool
// through Toxiproxy.
//
// A [Fault] is named after its effect on one attempt ("the response is lost",
// "the request never reaches the server", "the request is held, then
// released"). Faults are armed on a [Proxy] just before an attempt is sent and
// disarmed afterwards, so one proxy serves a whole run: the caller opens a fresh
// connection per attempt and each fault applies to exactly that attempt.
//
// Two [Backend] implementations exist: [NewEmbedded] runs Toxiproxy in-process
// (no Docker, no extra binary) and [NewRemote] drives a toxiproxy-server through
// its HTTP API. Both give the same faults the same, deterministic effect.
package faults
