// Package faultstest helps tests drive a real toxiproxy-server: it builds
// one from the Toxiproxy module onceproof depends on and runs it on a free
// loopback port. It imports only the standard library and testing.
package faultstest
