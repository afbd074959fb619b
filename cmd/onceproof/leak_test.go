package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if its tests leave goroutines behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Toxiproxy (v2.5.0) strands a link's first stub when the link's
		// writer fails while data is in flight and the proxy is then
		// stopped: nothing drains its channel. It is Toxiproxy's own, per
		// torn connection, and ends with the process.
		goleak.IgnoreTopFunction("github.com/Shopify/toxiproxy/v2/toxics.(*NoopToxic).Pipe"),
	)
}
