package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/harness"
)

// balance is how a trial spreads its attempts over the replicas of a tool
// that runs as several: round-robin from a drawn first replica, or a replica
// drawn for each of its first drawnAttempts attempts (round-robin after
// them). It is part of the drawn plan, so it shrinks and replays like the
// rest: towards round-robin from replica 1.
type balance struct {
	n     int
	first int   // the first replica of round-robin, from 0
	drawn []int // the replica of each attempt, from 0 (nil: round-robin)
}

// drawnAttempts is how many attempts' replicas a drawn balance chooses:
// more than any plan makes before its settle retries.
const drawnAttempts = 24

// drawBalance draws the balance of a trial of tool (nil for a tool that
// runs as one process, which draws nothing).
func drawBalance(t *rapid.T, tool harness.Tool) *balance {
	n := harness.ReplicasOf(tool)
	if n < 2 {
		return nil
	}
	b := &balance{n: n, first: rapid.IntRange(0, n-1).Draw(t, "replica-first")}
	if rapid.Bool().Draw(t, "replica-per-attempt") {
		b.drawn = rapid.SliceOfN(rapid.IntRange(0, n-1), drawnAttempts, drawnAttempts).Draw(t, "replicas")
	}
	return b
}

// pick is the replica (from 0) of attempt k (from 0).
func (b *balance) pick(k int) int {
	if k < len(b.drawn) {
		return b.drawn[k]
	}
	return (b.first + k) % b.n
}

// describe says how the first used attempts were spread, for the plan.
func (b *balance) describe(used int) string {
	if b.drawn == nil {
		return fmt.Sprintf("attempts go round-robin over %d replicas from replica %d", b.n, b.first+1)
	}
	var rs []string
	for k := range min(used, len(b.drawn)) {
		rs = append(rs, strconv.Itoa(b.drawn[k]+1))
	}
	s := fmt.Sprintf("the replica of each attempt is drawn (of %d): %s", b.n, strings.Join(rs, ", "))
	if used > len(b.drawn) {
		s += fmt.Sprintf(", then round-robin from replica %d", (b.first+len(b.drawn))%b.n+1)
	}
	return s
}

// wrap makes exec spread its attempts as b says and adds the balance to its
// plan (exec as it is when b is nil).
func (b *balance) wrap(exec func(*trial) (result, error)) func(*trial) (result, error) {
	if b == nil {
		return exec
	}
	return func(tr *trial) (result, error) {
		var used atomic.Int64
		tr.s.SetBalance(func(k int) int {
			used.Store(max(used.Load(), int64(k+1)))
			return b.pick(k)
		})
		defer tr.s.SetBalance(nil)
		res, err := exec(tr)
		res.plan += "; " + b.describe(int(used.Load()))
		return res, err
	}
}

// drawVictim draws which replica (from 1) a crash kills: 0 for a tool that
// runs as one process.
func drawVictim(t *rapid.T, tool harness.Tool) int {
	n := harness.ReplicasOf(tool)
	if n < 2 {
		return 0
	}
	return rapid.IntRange(1, n).Draw(t, "crash-replica")
}
