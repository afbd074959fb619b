package scenarios

import (
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
)

// DefaultMaxBackoff is the longest retry delay a plan draws.
const DefaultMaxBackoff = 250 * time.Millisecond

// step is one planned attempt: a fault (nil for none) after a delay.
type step struct {
	fault faults.Fault
	// tornFrac is where a torn request is cut, in thousandths of its body
	// (used when fault is a TornRequest placeholder).
	tornFrac int
	delay    time.Duration
	// deadline is how long the caller waits for an answer after the tool
	// committed before it gives up (0: until the tool's declared timeout);
	// drawn where nothing else ends the attempt (a black-holed response).
	deadline time.Duration
	// renew sends the attempt to restarted server processes, as a client
	// does after a broken pipe (drawn only for a [harness.Renewer]).
	renew bool
}

// drawRenew draws whether retry i goes to a restarted server (false, and
// nothing drawn, for a tool that cannot renew).
func drawRenew(t *rapid.T, tool harness.Tool, label string) bool {
	if _, ok := tool.(harness.Renewer); !ok {
		return false
	}
	return rapid.Bool().Draw(t, label)
}

// minDeadline is the shortest caller's deadline a plan draws.
const minDeadline = 5 * time.Millisecond

// deadlineSteps is the resolution of a drawn deadline.
const deadlineSteps = 4095

// drawDeadline draws how long a caller waits for an answer that will never
// come before it gives up: from minDeadline up to the tool's declared
// timeout, most often a few milliseconds (every such wait is idle time) and
// in a few percent of draws the full declared timeout (returned as 0: wait
// it out), so that a tool whose behaviour depends on how long its caller
// stays (one that notices the client going away) still meets a patient
// caller. It shrinks toward short.
func drawDeadline(t *rapid.T, timeout time.Duration, label string) time.Duration {
	if timeout <= minDeadline {
		return 0
	}
	u := rapid.IntRange(0, deadlineSteps).Draw(t, label)
	if u == deadlineSteps {
		return 0
	}
	f := float64(u) / deadlineSteps
	d := minDeadline + time.Duration(f*f*f*f*float64(timeout-minDeadline))
	return d.Round(time.Millisecond)
}

// drawDelay draws the wait before retry number i (0 for the first retry), the
// way a real agent backs off: exponential caps with full jitter, from
// immediate up to max.
func drawDelay(t *rapid.T, i int, max time.Duration, label string) time.Duration {
	if max <= 0 || i < 0 {
		return 0
	}
	ceiling := max >> 3 << min(i, 3)
	if ceiling > max || ceiling <= 0 {
		ceiling = max
	}
	jitter := rapid.IntRange(0, 100).Draw(t, label)
	return ceiling * time.Duration(jitter) / 100
}

func drawSeed(t *rapid.T, label string) uint64 {
	return rapid.Uint64Range(1, 1<<32).Draw(t, label)
}

func formatSteps(steps []step) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		name := "delivered"
		if s.fault != nil {
			name = s.fault.Name()
		}
		if s.deadline > 0 && i == 0 {
			name += fmt.Sprintf(" (the caller gives up %s after the commit)", s.deadline)
		} else if s.deadline > 0 {
			name += fmt.Sprintf(" (the caller gives up %s after sending)", s.deadline)
		} else if f, ok := s.fault.(faults.LoseResponse); ok && f.Mode == faults.LoseBlackhole {
			name += " (the caller waits out its timeout)"
		}
		if s.renew {
			name += " on a restarted server"
		}
		if i == 0 && s.delay == 0 {
			parts[i] = name
			continue
		}
		parts[i] = fmt.Sprintf("%s after %s", name, s.delay)
	}
	return strings.Join(parts, ", then ")
}
