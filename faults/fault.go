package faults

import "context"

// Fault is a network misbehaviour applied to the next attempt through a
// proxy. Arm installs it before the attempt is sent; the returned Disarm
// removes it once the attempt is over (for a hold, Disarm is the release).
//
// Faults are values: the same Fault armed twice has the same effect.
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
