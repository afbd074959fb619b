package openapi

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind (loading
// a document, fetching it, drafting a spec).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
