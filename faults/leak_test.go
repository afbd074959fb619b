package faults_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if its tests leave goroutines behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Toxiproxy's own: a link whose writer failed with data in flight
		// strands its first stub when the proxy stops (see scenarios).
		goleak.IgnoreTopFunction("github.com/Shopify/toxiproxy/v2/toxics.(*NoopToxic).Pipe"),
	)
}
