// Package repro turns a counterexample into a reproducer the owner of the
// failing service can run without onceproof: a self-contained bash script
// that performs the same attempts in the same order with curl (JSON-RPC
// over curl for an MCP tool) through a toxiproxy-server of their own,
// adding and removing the same toxics around each attempt, then asks the
// oracle (when it is an HTTP oracle) how many effects there are; and the
// toxics as JSON.
//
// It reads the report model only (the counterexample's attempts, with the
// request each sent and the toxics its fault set up).
//
// Imports: the standard library and harness/report.
package repro
