package faults

import "context"

// Fault is a network misbehaviour applied to the next attempt through a
// proxy. Arm installs it before the attempt is sent; the returned Disarm
// removes it once the attempt is over (for a hold, Disarm is the release).
//
// Faults are values: the same Fault armed twice has the same effect. Each
// says what it does to the proxy (Setup, from which Arm is derived, and
// which a reproducer turns into toxiproxy-cli commands) and where on an
// attempt's way it strikes (Phase), so that no one needs to read its Name.
type Fault interface {
	// Name identifies the fault in plans and reports, e.g.
	// "lose-response/reset-peer".
	Name() string
	// Arm installs the fault on p.
	Arm(ctx context.Context, p Proxy) (Disarm, error)
	// Reaches reports whether a complete request reaches the tool under this
	// fault (true for lose-response and hold, false for fail-before-server
	// and torn requests).
	Reaches() bool
	// Phase is where the fault strikes.
	Phase() Phase
	// Setup is what Arm does to the proxy.
	Setup() Setup
}

// Phase is where on an attempt's way a fault strikes.
type Phase string

// The phases.
const (
	// BeforeServer: the request never reaches the tool (refused, reset or
	// cut before its first byte).
	BeforeServer Phase = "before-server"
	// Torn: the request reaches the tool cut in the middle.
	Torn Phase = "torn"
	// ResponseLost: the request reaches the tool, its response does not
	// reach the caller.
	ResponseLost Phase = "response-lost"
	// Held: the request waits in the proxy until it is released.
	Held Phase = "held"
	// Dependency: the tool's own link to a dependency (its database) fails.
	Dependency Phase = "dependency"
	// Crash: the tool's process is killed (not a proxy fault: scenarios
	// record it for attempts they crash).
	Crash Phase = "crash"
)

// Phases lists every phase.
func Phases() []Phase { return []Phase{BeforeServer, Torn, ResponseLost, Held, Dependency, Crash} }

// Setup is what arming a fault does to a proxy: add Toxics in order, or,
// with Disable, close the proxy's listener (connections are refused) until
// disarmed.
type Setup struct {
	Toxics  []Toxic `json:"toxics,omitempty"`
	Disable bool    `json:"disable,omitempty"`
}

// arm applies s to p and returns the Disarm undoing it.
func arm(ctx context.Context, p Proxy, s Setup) (Disarm, error) {
	if s.Disable {
		if err := p.SetEnabled(ctx, false); err != nil {
			return nil, err
		}
		return func(ctx context.Context) error { return p.SetEnabled(ctx, true) }, nil
	}
	return armToxics(ctx, p, s.Toxics...)
}

// Disarm removes an armed fault.
type Disarm func(ctx context.Context) error

// armToxics adds toxics in order and returns a Disarm removing them; if one
// fails, those already added are removed.
func armToxics(ctx context.Context, p Proxy, ts ...Toxic) (Disarm, error) {
	var added []string
	disarm := func(ctx context.Context) error {
		var first error
		for i := len(added) - 1; i >= 0; i-- {
			if err := p.RemoveToxic(ctx, added[i]); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	for _, t := range ts {
		if err := p.AddToxic(ctx, t); err != nil {
			_ = disarm(ctx)
			return nil, err
		}
		added = append(added, t.Name)
	}
	return disarm, nil
}
