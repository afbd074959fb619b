// Package examples shows onceproof in use: create-ticket.yaml is a spec for
// the fixture tool started by hand, and the tests show the Go API a CI
// pipeline uses, both from a spec file and from a tool built in code.
package examples
