package scenarios

import (
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"
)

// The one place that touches rapid's settings.
//
// Trials draw their plans with rapid's generators from a seed of their own
// (drawPlan), which needs no settings at all. Shrinking a failure needs
// rapid.Check, which reads its settings (checks, seed, fail files, shrink
// time) from package-level flags: shrinkWithRapid sets them under a lock,
// long enough for rapid to read them, and restores them. A user's own rapid
// tests running in parallel with a shrink may see the temporary values.

// drawPlan draws the plan of seed: exactly what the first check of
// rapid.Check with -rapid.seed=seed draws, so a failure found here replays
// and shrinks there.
func drawPlan[P any](plan func(*rapid.T) P, seed uint64) P {
	// Example reads rapid's seed flag (and then uses seed instead).
	rapidSettings.mu.RLock()
	defer rapidSettings.mu.RUnlock()
	return rapid.Custom(plan).Example(int(seed))
}

// rapidSettings guards rapid's flags while our shrinks use them.
var rapidSettings struct {
	mu sync.RWMutex
	// users counts running shrinks; saved holds the values they changed
	// for the whole of their run (fail files off, rapid's own shrink time
	// out of the way: the search bounds shrinking itself).
	users int
	saved map[string]string
}

// rapidResult is how a rapid.Check under shrinkWithRapid ended.
type rapidResult int

const (
	rapidFailed  rapidResult = iota // the seed failed again and was shrunk
	rapidPassed                     // the seed did not fail again
	rapidAborted                    // check called abort
)

// shrinkWithRapid runs rapid.Check on one check, the plan of seed: rapid
// confirms the failure and shrinks it, calling check for every candidate
// plan. check fails t (t.Fatal) when the plan fails, and may call abort to
// end the whole check at once.
func shrinkWithRapid[P any](seed uint64, name string, plan func(*rapid.T) P, check func(t *rapid.T, p P, abort func())) rapidResult {
	ensureFlags()
	tb := &runTB{name: name}
	started := make(chan struct{})
	var once sync.Once
	prop := func(t *rapid.T) {
		once.Do(func() { close(started) })
		p := rapid.Custom(plan).Draw(t, "plan")
		check(t, p, tb.abortNow)
	}
	checks := 1
	if testing.Short() {
		checks = 5 // rapid divides by five under -short
	}

	rs := &rapidSettings
	rs.mu.Lock()
	if rs.users == 0 {
		rs.saved = setFlags(map[string]string{"rapid.nofailfile": "true", "rapid.shrinktime": "1h"})
	}
	rs.users++
	restore := setFlags(map[string]string{"rapid.checks": strconv.Itoa(checks), "rapid.seed": strconv.FormatUint(seed, 10)})
	done := tb.start(func() { rapid.Check(tb, prop) })
	select {
	case <-started: // rapid has read its checks and seed
	case <-done:
	}
	setFlags(restore)
	rs.mu.Unlock()

	<-done
	rs.mu.Lock()
	if rs.users--; rs.users == 0 {
		setFlags(rs.saved)
	}
	rs.mu.Unlock()
	switch {
	case tb.aborted():
		return rapidAborted
	case tb.Failed():
		return rapidFailed
	}
	return rapidPassed
}

// setFlags sets rapid's flags and returns their previous values.
func setFlags(values map[string]string) map[string]string {
	old := make(map[string]string, len(values))
	for name, v := range values {
		f := flag.Lookup(name)
		if f == nil {
			panic("scenarios: rapid has no flag " + name)
		}
		old[name] = f.Value.String()
		if err := f.Value.Set(v); err != nil {
			panic(fmt.Sprintf("scenarios: rapid flag %s=%s: %v", name, v, err))
		}
	}
	return old
}

// flagValue reads a flag of rapid's (or any) under the lock that guards
// rapid's settings; "" when it does not exist. While shrinks run, a flag
// they changed for their whole run reads as the user set it: a
// certification that starts meanwhile must not take the shrinks' 1h shrink
// time for the user's.
func flagValue(name string) string {
	rapidSettings.mu.RLock()
	defer rapidSettings.mu.RUnlock()
	if v, ok := rapidSettings.saved[name]; ok && rapidSettings.users > 0 {
		return v
	}
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// ensureFlags makes testing.Short usable outside go test (rapid asks it): it
// registers testing's flags and parses an empty command line when nobody
// did. Inside go test both are done already.
func ensureFlags() {
	rapidSettings.mu.Lock()
	defer rapidSettings.mu.Unlock()
	if flag.Lookup("test.short") == nil {
		testing.Init()
	}
	if !flag.Parsed() {
		_ = flag.CommandLine.Parse(nil)
	}
}

// runTB is the rapid.TB of a shrink: it keeps what rapid reports and ends
// the check goroutine on FailNow, as testing does.
type runTB struct {
	name string

	mu    sync.Mutex
	errs  []string
	fail  bool
	abort bool
}

// start runs f on its own goroutine (FailNow and abort end it) and returns
// a channel closed when it has ended.
func (tb *runTB) start(f func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	return done
}

// abort ends the check at once (from inside the property).
func (tb *runTB) abortNow() {
	tb.mu.Lock()
	tb.abort = true
	tb.mu.Unlock()
	runtime.Goexit()
}

func (tb *runTB) aborted() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.abort
}

func (tb *runTB) Helper()                          {}
func (tb *runTB) Name() string                     { return tb.name }
func (tb *runTB) Logf(format string, args ...any)  {}
func (tb *runTB) Log(args ...any)                  {}
func (tb *runTB) Skipf(format string, args ...any) { tb.SkipNow() }
func (tb *runTB) Skip(args ...any)                 { tb.SkipNow() }
func (tb *runTB) SkipNow()                         { runtime.Goexit() }
func (tb *runTB) Errorf(format string, args ...any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.errs = append(tb.errs, fmt.Sprintf(format, args...))
	tb.fail = true
}
func (tb *runTB) Error(args ...any)                 { tb.Errorf("%s", fmt.Sprint(args...)) }
func (tb *runTB) Fatalf(format string, args ...any) { tb.Errorf(format, args...); tb.FailNow() }
func (tb *runTB) Fatal(args ...any)                 { tb.Error(args...); tb.FailNow() }
func (tb *runTB) FailNow()                          { tb.Fail(); runtime.Goexit() }
func (tb *runTB) Fail() {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.fail = true
}
func (tb *runTB) Failed() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.fail
}

// firstError is the first line rapid reported, for messages.
func (tb *runTB) firstError() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.errs) == 0 {
		return ""
	}
	return strings.SplitN(tb.errs[0], "\n", 2)[0]
}
