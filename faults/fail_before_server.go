package faults

import "context"

// FailMode is how a request is stopped before it reaches the tool.
type FailMode string

const (
	// FailRefuse disables the proxy: the connection is refused, which the
	// caller can prove means "not delivered".
	FailRefuse FailMode = "refused"
	// FailReset resets the connection at the first request byte (reset_peer,
	// upstream): nothing reaches the tool.
	FailReset FailMode = "reset-peer"
	// FailCut closes the connection at the first request byte (limit_data,
	// upstream, bytes=0): nothing reaches the tool.
	FailCut FailMode = "limit-data"
)

// FailModes lists every FailMode.
func FailModes() []FailMode { return []FailMode{FailRefuse, FailReset, FailCut} }

// FailBeforeServer stops the request before any of it reaches the tool.
type FailBeforeServer struct {
	Mode FailMode
}

// Name implements Fault.
func (f FailBeforeServer) Name() string { return "fail-before-server/" + string(f.Mode) }

// Reaches implements Fault: nothing reaches the tool.
func (f FailBeforeServer) Reaches() bool { return false }

// Phase implements Fault.
func (f FailBeforeServer) Phase() Phase { return BeforeServer }

// Arm implements Fault.
func (f FailBeforeServer) Arm(ctx context.Context, p Proxy) (Disarm, error) {
	return arm(ctx, p, f.Setup())
}

// Setup implements Fault.
func (f FailBeforeServer) Setup() Setup {
	t := Toxic{Name: "onceproof-fail-before-server", Stream: Upstream}
	switch f.Mode {
	case FailRefuse:
		return Setup{Disable: true}
	case FailReset:
		t.Type, t.Attributes = "reset_peer", map[string]any{"timeout": 0}
	case FailCut:
		t.Type, t.Attributes = "limit_data", map[string]any{"bytes": 0}
	default:
		panic("faults: unknown FailMode " + string(f.Mode))
	}
	return Setup{Toxics: []Toxic{t}}
}
