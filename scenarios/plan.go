package scenarios

import (
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
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
		if i == 0 && s.delay == 0 {
			parts[i] = name
			continue
		}
		parts[i] = fmt.Sprintf("%s after %s", name, s.delay)
	}
	return strings.Join(parts, ", then ")
}
