package faults

import "context"

// holdLatency is far longer than any attempt: a held request moves only when
// the hold is released.
const holdLatency = 3_600_000 // milliseconds

// Hold keeps every request sent through the proxy in the proxy until the
// returned Disarm releases them all at once (a latency toxic, upstream, that is
// removed: Toxiproxy flushes what it held). Requests sent while the hold is
// armed reach the tool together on release, which makes a hold both a barrier
// for concurrent duplicates and a way to make a timed-out original overlap
// with its retry.
type Hold struct{}

// Name implements Fault.
func (Hold) Name() string { return "hold" }

// Reaches implements Fault: a held request reaches the tool on release.
func (Hold) Reaches() bool { return true }

// Phase implements Fault.
func (Hold) Phase() Phase { return Held }

// Arm implements Fault.
func (f Hold) Arm(ctx context.Context, p Proxy) (Disarm, error) { return arm(ctx, p, f.Setup()) }

// Setup implements Fault.
func (Hold) Setup() Setup {
	return Setup{Toxics: []Toxic{{
		Name:       "onceproof-hold",
		Type:       "latency",
		Stream:     Upstream,
		Attributes: map[string]any{"latency": holdLatency},
	}}}
}
