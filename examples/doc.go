// Package examples shows onceproof in use: create-ticket.yaml is a spec for
// the fixture tool started by hand, long-running.yaml one for the
// long-running fixture (a trigger and its status call), and the tests show the Go API a CI
// pipeline uses, both from a spec file and from a tool built in code.
package examples
