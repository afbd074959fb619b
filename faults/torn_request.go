package faults

import (
	"context"
	"fmt"
)

// TornRequest forwards only the first Bytes bytes of the request and then
// closes the connection (limit_data, upstream): the tool sees the start of the
// request but its body never arrives whole. Bytes must be positive and less
// than the request's length; the caller picks a cut inside the body.
type TornRequest struct {
	Bytes int64
}

// Name implements Fault.
func (f TornRequest) Name() string { return fmt.Sprintf("torn-request/%d-bytes", f.Bytes) }

// Reaches implements Fault: the request never arrives whole.
func (f TornRequest) Reaches() bool { return false }

// Phase implements Fault.
func (f TornRequest) Phase() Phase { return Torn }

// Arm implements Fault.
func (f TornRequest) Arm(ctx context.Context, p Proxy) (Disarm, error) { return arm(ctx, p, f.Setup()) }

// Setup implements Fault.
func (f TornRequest) Setup() Setup {
	if f.Bytes <= 0 {
		panic("faults: TornRequest.Bytes must be positive")
	}
	return Setup{Toxics: []Toxic{{
		Name:       "onceproof-torn-request",
		Type:       "limit_data",
		Stream:     Upstream,
		Attributes: map[string]any{"bytes": f.Bytes},
	}}}
}
