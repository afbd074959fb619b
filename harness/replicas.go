package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/onceproof/onceproof/faults"
)

// MaxReplicas bounds container.replicas.
const MaxReplicas = 16

// Replicated is a tool that runs as several identical processes (replicas)
// sharing their dependencies, as behind a load balancer. A [Session] puts a
// fault proxy in front of each replica and spreads its attempts over them
// (see [Session.SetBalance]); each attempt records the replica that served
// it. A tool with one replica need not implement it.
type Replicated interface {
	// Replicas is how many replicas run (at least 1).
	Replicas() int
	// ReplicaUpstream is the host:port of replica i (from 1) that its
	// fault proxy forwards to.
	ReplicaUpstream(i int) string
}

// ReplicaCrasher is a [Crasher] with several replicas: CrashReplica kills
// replica i (from 1) alone, and Crasher.Restart restarts every replica that
// was killed.
type ReplicaCrasher interface {
	Crasher
	CrashReplica(ctx context.Context, i int) error
}

// ReplicasOf is how many replicas tool runs as (1 unless it is
// [Replicated]).
func ReplicasOf(tool Tool) int {
	if r, ok := tool.(Replicated); ok {
		return max(r.Replicas(), 1)
	}
	return 1
}

// upstreams lists where a tool's fault proxies forward to: one per replica.
func upstreams(tool Tool) []string {
	n := ReplicasOf(tool)
	if n == 1 {
		return []string{tool.Upstream()}
	}
	r := tool.(Replicated)
	out := make([]string, n)
	for i := range out {
		out[i] = r.ReplicaUpstream(i + 1)
	}
	return out
}

// balancer chooses the replica of each attempt through a Session.
type balancer struct {
	mu sync.Mutex
	// pick returns the replica (from 0, taken modulo the count) of the
	// k-th attempt since it was set; nil is round-robin.
	pick func(k int) int
	k    int
}

// SetBalance makes pick choose the replica of each following attempt
// through this Session of a [Replicated] tool: pick(k) is the replica, from
// 0 and taken modulo their number, of the k-th attempt (from 0) since the
// call. nil restores round-robin. Attempts that go out at once (a
// concurrent duplicate) take their turns in the order they are sent.
func (s *Session) SetBalance(pick func(k int) int) {
	s.balance.mu.Lock()
	defer s.balance.mu.Unlock()
	s.balance.pick, s.balance.k = pick, 0
}

// Replicas is how many replicas the Session spreads its attempts over.
func (s *Session) Replicas() int { return len(s.replicas) }

// pickReplica takes the next attempt's turn and returns its replica (from 0).
func (s *Session) pickReplica() int {
	n := len(s.replicas)
	if n <= 1 {
		return 0
	}
	s.balance.mu.Lock()
	defer s.balance.mu.Unlock()
	k := s.balance.k
	s.balance.k++
	r := k
	if s.balance.pick != nil {
		r = s.balance.pick(k)
	}
	return ((r % n) + n) % n
}

// armAll arms f on every proxy of ps and returns one Disarm for all of
// them; if one fails, those already armed are disarmed.
func armAll(ctx context.Context, f faults.Fault, ps []faults.Proxy) (faults.Disarm, error) {
	var ds []faults.Disarm
	undo := func(ctx context.Context) error {
		var errs []error
		for _, d := range ds {
			errs = append(errs, d(ctx))
		}
		return errors.Join(errs...)
	}
	for _, p := range ps {
		d, err := f.Arm(ctx, p)
		if err != nil {
			_ = undo(ctx)
			return nil, fmt.Errorf("arm %s: %w", f.Name(), err)
		}
		ds = append(ds, d)
	}
	return undo, nil
}
