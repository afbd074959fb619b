package faults

import (
	"context"
	"fmt"
)

// ResetConnection resets every connection through the proxy when data next
// flows in Stream, After milliseconds later (reset_peer). On a tool's link to
// its database it breaks the connection in the middle of whatever the tool
// was doing; unlike the request faults it also hits connections opened
// before it was armed (a connection pool's).
type ResetConnection struct {
	Stream Direction
	After  int // milliseconds
}

// Name implements Fault.
func (f ResetConnection) Name() string {
	return fmt.Sprintf("reset-connection/%s/%dms", f.Stream, f.After)
}

// Reaches implements Fault: what reaches the other side is undetermined.
func (f ResetConnection) Reaches() bool { return false }

// Phase implements Fault.
func (f ResetConnection) Phase() Phase { return Dependency }

// Arm implements Fault.
func (f ResetConnection) Arm(ctx context.Context, p Proxy) (Disarm, error) {
	return arm(ctx, p, f.Setup())
}

// Setup implements Fault.
func (f ResetConnection) Setup() Setup {
	return Setup{Toxics: []Toxic{{Name: "onceproof-reset-connection", Type: "reset_peer", Stream: f.Stream,
		Attributes: map[string]any{"timeout": f.After}}}}
}
