package scenarios

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

// TestRetentionDelays: the drawn waits stay within the window, most are
// short, a quarter or so fall in its upper half (the bound included now and
// then), and the delay grows with the integer drawn, so that shrinking the
// draw shortens the wait.
func TestRetentionDelays(t *testing.T) {
	for _, tc := range []struct {
		window time.Duration
		reason string
	}{
		{30 * time.Second, "the default --max-wait"},
		{4 * time.Second, "a short window"},
		{500 * time.Millisecond, "a window of a few draws of backoff"},
	} {
		const n = 2000
		delays := make([]time.Duration, 0, n)
		upper, whole := 0, 0
		for seed := uint64(1); seed <= n; seed++ {
			d := drawPlan(func(t *rapid.T) time.Duration { return drawRetentionDelay(t, tc.window) }, seed)
			assert.GreaterOrEqual(t, d, minRetentionDelay, tc.reason)
			assert.LessOrEqual(t, d, tc.window, tc.reason)
			delays = append(delays, d)
			if d >= tc.window/2 {
				upper++
			}
			if d == tc.window {
				whole++
			}
		}
		sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
		assert.Less(t, delays[n/2], 50*time.Millisecond, "%s: most waits are short", tc.reason)
		assert.InDelta(t, 0.25, float64(upper)/n, 0.08, "%s: about a quarter in the upper half", tc.reason)
		assert.Positive(t, whole, "%s: the whole window is drawn now and then", tc.reason)
	}
	// Monotone in the draw: the shrinker's smaller integer is a shorter wait.
	prev := time.Duration(0)
	for u := 0; u <= retentionSteps; u++ {
		d := retentionDelay(u, 30*time.Second)
		assert.GreaterOrEqual(t, d, prev, "u %d", u)
		prev = d
	}
	assert.Equal(t, minRetentionDelay, retentionDelay(0, 30*time.Second), "the smallest draw is the shortest wait")
	assert.Equal(t, 30*time.Second, retentionDelay(retentionSteps, 30*time.Second), "the largest is the window")
}
