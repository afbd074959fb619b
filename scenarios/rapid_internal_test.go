package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestSettingsWhileShrinking: a certification that starts while another
// one shrinks reads the user's shrink time, not the hour the shrink set for
// itself.
func TestSettingsWhileShrinking(t *testing.T) {
	ensureFlags()
	rs := &rapidSettings
	rs.mu.Lock()
	rs.users++
	first := rs.users == 1
	if first {
		rs.saved = setFlags(map[string]string{"rapid.shrinktime": "1h"})
	}
	rs.mu.Unlock()
	defer func() {
		rs.mu.Lock()
		if rs.users--; rs.users == 0 {
			setFlags(rs.saved)
		}
		rs.mu.Unlock()
	}()
	if !first {
		t.Skip("another shrink is running")
	}
	c := Config{Checks: 1, Seed: 1}.withSearchDefaults()
	assert.NotEqual(t, time.Hour, c.ShrinkTime, "the shrinks' own setting is not the user's")
	assert.Equal(t, rs.saved["rapid.shrinktime"], flagValue("rapid.shrinktime"))
}
