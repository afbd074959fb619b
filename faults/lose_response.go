package faults

import "context"

// LoseMode is how a response is lost on its way back to the caller.
type LoseMode string

const (
	// LoseCut closes the connection at the first response byte (Toxiproxy
	// limit_data, downstream, bytes=0): the caller reads EOF.
	LoseCut LoseMode = "limit-data"
	// LoseReset resets the connection at the first response byte (reset_peer,
	// downstream): the caller reads "connection reset by peer".
	LoseReset LoseMode = "reset-peer"
	// LoseBlackhole swallows the response (timeout, downstream, timeout=0):
	// the caller meets its own deadline.
	LoseBlackhole LoseMode = "blackhole"
)

// LoseModes lists every LoseMode, fastest to detect first.
func LoseModes() []LoseMode { return []LoseMode{LoseCut, LoseReset, LoseBlackhole} }

// LoseResponse lets the request reach the tool intact and loses the tool's
// response: the tool commits, the caller never learns it did.
type LoseResponse struct {
	Mode LoseMode
}

// Name implements Fault.
func (f LoseResponse) Name() string { return "lose-response/" + string(f.Mode) }

// Reaches implements Fault: the request reaches the tool.
func (f LoseResponse) Reaches() bool { return true }

// Phase implements Fault.
func (f LoseResponse) Phase() Phase { return ResponseLost }

// Arm implements Fault.
func (f LoseResponse) Arm(ctx context.Context, p Proxy) (Disarm, error) {
	return arm(ctx, p, f.Setup())
}

// Setup implements Fault.
func (f LoseResponse) Setup() Setup {
	t := Toxic{Name: "onceproof-lose-response", Stream: Downstream}
	switch f.Mode {
	case LoseCut:
		t.Type, t.Attributes = "limit_data", map[string]any{"bytes": 0}
	case LoseReset:
		t.Type, t.Attributes = "reset_peer", map[string]any{"timeout": 0}
	case LoseBlackhole:
		t.Type, t.Attributes = "timeout", map[string]any{"timeout": 0}
	default:
		panic("faults: unknown LoseMode " + string(f.Mode))
	}
	return Setup{Toxics: []Toxic{t}}
}
