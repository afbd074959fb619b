package faults

import (
	"context"
	"fmt"
)

// CutConnection lets Bytes more bytes through in Stream on each connection
// through the proxy and then closes it (limit_data, counted from when it is
// armed). On a tool's link to its database, a small cut lands in the middle
// of a transaction: before the commit reaches the database (upstream) or
// after the database committed but before the tool hears so (downstream).
type CutConnection struct {
	Stream Direction
	Bytes  int64
}

// Name implements Fault.
func (f CutConnection) Name() string {
	return fmt.Sprintf("cut-connection/%s/%d-bytes", f.Stream, f.Bytes)
}

// Reaches implements Fault: what reaches the other side is undetermined.
func (f CutConnection) Reaches() bool { return false }

// Phase implements Fault.
func (f CutConnection) Phase() Phase { return Dependency }

// Arm implements Fault.
func (f CutConnection) Arm(ctx context.Context, p Proxy) (Disarm, error) {
	return arm(ctx, p, f.Setup())
}

// Setup implements Fault.
func (f CutConnection) Setup() Setup {
	return Setup{Toxics: []Toxic{{Name: "onceproof-cut-connection", Type: "limit_data", Stream: f.Stream,
		Attributes: map[string]any{"bytes": f.Bytes}}}}
}
