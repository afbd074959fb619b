package scenarios_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a certification leaves goroutines behind
// (proxies, links, fixture servers, attempts).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
