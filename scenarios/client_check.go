package scenarios

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/onceproof/onceproof/harness/capture"
)

// clientJudgement is what one trial showed for one check.
type clientJudgement struct {
	// invalid says why the trial does not count ("" when it does);
	// violation how the wrapper broke the rule ("" when it held), and kind
	// the violation without what varies between trials (rapid shrinks
	// towards the same kind).
	invalid, violation, kind string
	// gaps are client-backoff's samples: the waits before retries after a
	// transient answer without Retry-After.
	gaps []clientGap
}

// clientGap is the wait before retry number retry (1 for an operation's
// second attempt) of some operation.
type clientGap struct {
	retry int
	gap   time.Duration
}

func (j *clientJudgement) fail(kind, format string, args ...any) {
	if j.violation == "" {
		j.kind, j.violation = kind, fmt.Sprintf(format, args...)
	}
}

// judgeClient applies check id's rule (see the ID constants) to a trial.
func judgeClient(id ID, r *clientRun, cfg ClientConfig) clientJudgement {
	var j clientJudgement
	if r.writes() == 0 {
		j.invalid = "the wrapper made no write attempt"
		if e := r.firstOpError(); e != "" {
			j.invalid += " (" + e + ")"
		}
		return j
	}
	switch id {
	case ClientKeyPresent:
		judgeKeyPresent(&j, r)
	case ClientKeyStable:
		judgeKeyStable(&j, r)
	case ClientNoRetry4xx:
		judgeNoRetry4xx(&j, r)
	case ClientBackoff:
		judgeBackoff(&j, r)
	case ClientBounded:
		judgeBounded(&j, r, cfg)
	case ClientKeyNoPII:
		judgeKeyNoPII(&j, r)
	default:
		panic(fmt.Sprintf("scenarios: unknown client check %q", id))
	}
	return j
}

// position describes the operation's attempt number k (from 0): "the first
// attempt" or "retry 2, after 503 on attempt 4".
func (r *clientRun) position(op, k int) string {
	if k == 0 {
		return "its first attempt"
	}
	prev := r.attempt(op, k-1)
	return fmt.Sprintf("retry %d, after %s on attempt %d", k, prev.Answer, prev.N)
}

func keyText(c *capture.Record) string {
	if !c.HasKey {
		return "no key"
	}
	return "key " + quoteShort(c.Key, 64)
}

func judgeKeyPresent(j *clientJudgement, r *clientRun) {
	for i, op := range r.ops {
		for k := range op.attempts {
			c := r.attempt(i, k)
			switch {
			case !c.HasKey:
				j.fail("no-key", "attempt %d (op-%d, %s) carried no Idempotency-Key header", c.N, i+1, r.position(i, k))
			case strings.TrimSpace(c.Key) == "":
				j.fail("empty-key", "attempt %d (op-%d, %s) carried an empty Idempotency-Key header", c.N, i+1, r.position(i, k))
			}
		}
	}
}

func judgeKeyStable(j *clientJudgement, r *clientRun) {
	retried := false
	for i, op := range r.ops {
		if len(op.attempts) < 2 {
			continue
		}
		retried = true
		first := r.attempt(i, 0)
		for k := 1; k < len(op.attempts); k++ {
			c := r.attempt(i, k)
			if c.HasKey != first.HasKey || c.Key != first.Key {
				j.fail("retry-changed-key", "op-%d: attempt %d (%s) carried %s, but its first attempt %d carried %s: a retry must reuse its operation's key, or a server that committed the first attempt commits again",
					i+1, c.N, r.position(i, k), keyText(c), first.N, keyText(first))
			}
		}
	}
	if !retried {
		j.invalid = "no operation was retried (at most one attempt each)"
		return
	}
	seen := map[string]int{} // key ("" for none) → operation index
	for i, op := range r.ops {
		if len(op.attempts) == 0 {
			continue
		}
		c := r.attempt(i, 0)
		other, dup := seen[c.Key]
		if !dup {
			seen[c.Key] = i
			continue
		}
		switch {
		case c.Key == "":
			j.fail("shared-key", "op-%d and op-%d both carried no key (or an empty one): the server cannot tell two operations apart", other+1, i+1)
		case op.plan.repeats == other+1:
			j.fail("payload-key", "op-%d performed op-%d's payload again, as a new operation, and carried the same key %s: a key derived from the payload (or from the operation number) merges two operations into one",
				i+1, other+1, quoteShort(c.Key, 64))
		default:
			j.fail("shared-key", "op-%d and op-%d carried the same key %s: the server takes the second operation for a retry of the first", other+1, i+1, quoteShort(c.Key, 64))
		}
	}
}

func judgeNoRetry4xx(j *clientJudgement, r *clientRun) {
	served := false
	for i, op := range r.ops {
		for k := range op.attempts {
			c := r.attempt(i, k)
			if !isFinal4xx(c.Answer) {
				continue
			}
			served = true
			if k+1 < len(op.attempts) {
				next := r.attempt(i, k+1)
				j.fail("retried-4xx", "op-%d: attempt %d retried after attempt %d was answered %d (%d attempts after it): a 4xx is final, the same request cannot succeed",
					i+1, next.N, c.N, c.Answer.Status, len(op.attempts)-k-1)
			} else if op.err == nil && !op.abandoned {
				j.fail("success-after-4xx", "op-%d reported success although its last attempt %d was answered %d", i+1, c.N, c.Answer.Status)
			}
			break
		}
	}
	if !served {
		j.invalid = "no 4xx was served (the wrapper gave up before the attempt the plan answers 4xx)"
	}
}

func judgeBackoff(j *clientJudgement, r *clientRun) {
	retried := false
	for i, op := range r.ops {
		// retry numbers the wrapper's own retries: an attempt that the
		// HTTP stack sent again at once after a broken connection (Go's
		// http.Transport re-sends a request carrying an Idempotency-Key
		// when a reused connection fails) is not a backoff step, and
		// counting it would put two of the wrapper's steps under one
		// number, making plain backoff look jittered.
		retry := 0
		for k := 1; k < len(op.attempts); k++ {
			prev, c := r.attempt(i, k-1), r.attempt(i, k)
			if !isTransient(prev.Answer) {
				continue
			}
			retried = true
			gap := max(c.Received.Sub(prev.Answered), 0)
			if ra := prev.Answer.RetryAfter; ra > 0 {
				retry++
				want := time.Duration(ra) * time.Second
				if gap < want-RetryAfterTolerance {
					j.fail("retry-after-ignored", "op-%d: attempt %d came %s after attempt %d was answered %s; want at least %s (Retry-After, %s tolerance)",
						i+1, c.N, roundGap(gap), prev.N, prev.Answer, want, RetryAfterTolerance)
				}
				continue
			}
			if transportReplay(prev.Answer, gap) {
				continue
			}
			retry++
			j.gaps = append(j.gaps, clientGap{retry: retry, gap: gap})
		}
	}
	if !retried {
		j.invalid = "no operation was retried after a transient failure"
	}
}

// transportReplayGap is how soon after a broken connection an attempt
// counts as the HTTP stack's own re-send rather than a retry of the
// wrapper's.
const transportReplayGap = time.Millisecond

// transportReplay reports whether an attempt gap after the answer a looks
// like the HTTP stack re-sending on its own: a connection that broke (lost
// response, reset), and a new attempt within transportReplayGap. Waits
// after 5xx and 429 answers still judge a wrapper that never waits.
func transportReplay(a capture.Answer, gap time.Duration) bool {
	return (a.Kind == capture.KindLose || a.Kind == capture.KindReset) && gap < transportReplayGap
}

func judgeBounded(j *clientJudgement, r *clientRun, cfg ClientConfig) {
	failing := false
	for i, op := range r.ops {
		n := len(op.attempts)
		if op.plan.forever() && n > 0 {
			failing = true
		}
		took := op.ended.Sub(op.began)
		switch {
		case n > cfg.MaxAttempts:
			j.fail("too-many-attempts", "op-%d made %d attempts (answers: %s), want at most %d", i+1, n, r.answers(i), cfg.MaxAttempts)
		case took > cfg.MaxOpTime:
			j.fail("too-long", "op-%d took %s (%d attempts), want at most %s", i+1, roundGap(took), n, cfg.MaxOpTime)
		case op.abandoned:
			j.fail("ignores-cancel", "op-%d %v", i+1, op.err)
		}
		if op.err == nil && n > 0 && !r.succeeded(i) {
			j.fail("false-success", "op-%d reported success, but none of its %d attempts was answered 2xx (answers: %s)", i+1, n, r.answers(i))
		}
		for k := range op.attempts {
			if c := r.attempt(i, k); c.Late {
				j.fail("late-attempt", "attempt %d of op-%d arrived %s after op-%d returned: the wrapper retries in the background",
					c.N, i+1, roundGap(c.Received.Sub(op.ended)), i+1)
			}
		}
	}
	if !failing {
		j.invalid = "the operation the server kept failing made no attempt"
	}
}

// succeeded reports whether an attempt of operation op was answered 2xx.
func (r *clientRun) succeeded(op int) bool {
	for k := range r.ops[op].attempts {
		if r.attempt(op, k).Answer.Kind == capture.KindOK {
			return true
		}
	}
	return false
}

// answers lists what operation op's attempts were answered, shortened.
func (r *clientRun) answers(op int) string {
	var s []string
	for k := range r.ops[op].attempts {
		if k == 8 {
			s = append(s, "…")
			break
		}
		s = append(s, r.attempt(op, k).Answer.String())
	}
	return strings.Join(s, ", ")
}

var (
	emailText = regexp.MustCompile(`(?i)[a-z0-9._%+\-]+@[a-z0-9.\-]+\.[a-z]{2,}`)
	hexText   = regexp.MustCompile(`^[0-9a-fA-F-]+$`)
)

// minValue and minHexValue are the shortest body values compared with keys.
const (
	minValue    = 4
	minHexValue = 12
)

func judgeKeyNoPII(j *clientJudgement, r *clientRun) {
	compared := false
	for i, op := range r.ops {
		for k := range op.attempts {
			c := r.attempt(i, k)
			if !c.HasKey || c.Key == "" {
				continue
			}
			forms := []string{strings.ToLower(c.Key)}
			if dec, err := url.QueryUnescape(c.Key); err == nil && dec != c.Key {
				forms = append(forms, strings.ToLower(dec))
			}
			for _, f := range forms {
				if m := emailText.FindString(f); m != "" {
					j.fail("email-in-key", "attempt %d (op-%d) carried key %s, which contains the e-mail address %q", c.N, i+1, quoteShort(c.Key, 96), m)
				}
			}
			for _, v := range bodyValues(c.Body) {
				if len(v.value) < minValue || hexText.MatchString(v.value) && len(v.value) < minHexValue {
					continue
				}
				compared = true
				lv := strings.ToLower(v.value)
				if slices.ContainsFunc(forms, func(f string) bool { return strings.Contains(f, lv) }) {
					j.fail("value-in-key", "attempt %d (op-%d) carried key %s, which contains the request's value %q (%s): keys must not carry request data",
						c.N, i+1, quoteShort(c.Key, 96), v.value, v.path)
				}
			}
		}
	}
	if !compared && j.violation == "" {
		j.invalid = "no attempt carried a key along with a body value to compare it with"
	}
}

// bodyValue is a string value of a request body and where it was.
type bodyValue struct{ path, value string }

// bodyValues returns the string values of a JSON body (with their JSON
// pointers) or, for a body that is not JSON, of a form-encoded one.
func bodyValues(body []byte) []bodyValue {
	var v any
	if err := json.Unmarshal(body, &v); err == nil {
		var out []bodyValue
		walkJSON("", v, &out)
		return out
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil
	}
	var out []bodyValue
	for k, vs := range form {
		for _, s := range vs {
			out = append(out, bodyValue{path: "field " + k, value: s})
		}
	}
	return out
}

func walkJSON(path string, v any, out *[]bodyValue) {
	switch v := v.(type) {
	case string:
		p := path
		if p == "" {
			p = "/"
		}
		*out = append(*out, bodyValue{path: "field " + p, value: v})
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkJSON(path+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(k), v[k], out)
		}
	case []any:
		for i, e := range v {
			walkJSON(fmt.Sprintf("%s/%d", path, i), e, out)
		}
	}
}

// Pooled backoff rules (see ClientBackoff).
const (
	backoffMinSamples = 4
	backoffMinGrowth  = time.Millisecond
	jitterMinMedian   = 2 * time.Millisecond
	jitterMinBand     = time.Millisecond
)

// pooledBackoff applies client-backoff's growth and jitter rules to the
// gaps of the valid trials: a violation, or why they cannot be judged.
func pooledBackoff(gaps []clientGap, trials int) (violation, unknown string) {
	var early, late2, late3 []time.Duration
	byRetry := map[int][]time.Duration{}
	floor := time.Duration(-1)
	for _, g := range gaps {
		byRetry[g.retry] = append(byRetry[g.retry], g.gap)
		if floor < 0 || g.gap < floor {
			floor = g.gap
		}
		switch {
		case g.retry == 1:
			early = append(early, g.gap)
		case g.retry >= 3:
			late3 = append(late3, g.gap)
			late2 = append(late2, g.gap)
		default:
			late2 = append(late2, g.gap)
		}
	}
	late, from := late3, 3
	if len(late3) < backoffMinSamples {
		late, from = late2, 2
	}
	if len(early) < backoffMinSamples || len(late) < backoffMinSamples {
		return "", fmt.Sprintf("too few retries to judge backoff: %d first retries and %d later ones over %d trials, want at least %d each",
			len(early), len(late), trials, backoffMinSamples)
	}
	me, ml := median(early), median(late)
	if ml-me < backoffMinGrowth || 4*ml < 5*me || 2*(ml-floor) < 3*(me-floor) {
		return fmt.Sprintf("retry delays do not grow: over %d trials the median wait before a first retry was %s and before retry %d or later %s (the fastest retry: %s); want the later median at least %s longer, 1.25× the first and, above the fastest, 1.5× the first",
			trials, roundGap(me), from, roundGap(ml), roundGap(floor), backoffMinGrowth), ""
	}
	// Jitter is judged at every retry number with enough waits: plain
	// backoff clusters its waits around one value (timing noise moves a
	// few of them, not most), jittered backoff spreads them. At least half
	// of the retry numbers must be spread.
	var judged, spread int
	var tightest string
	for _, k := range slices.Sorted(maps.Keys(byRetry)) {
		g := byRetry[k]
		if len(g) < backoffMinSamples {
			continue
		}
		m := median(g)
		if m < jitterMinMedian {
			continue
		}
		judged++
		band := max(jitterMinBand, m/8)
		near := 0
		for _, x := range g {
			if x >= m-band && x <= m+band {
				near++
			}
		}
		if 2*near < len(g) {
			spread++
		} else if tightest == "" {
			tightest = fmt.Sprintf("retry %d: %d of %d waits within %s of their median %s", k, near, len(g), roundGap(band), roundGap(m))
		}
	}
	if judged == 0 {
		return "", fmt.Sprintf("retry delays too short to judge jitter: no retry number had %d waits with a median of %s or more", backoffMinSamples, jitterMinMedian)
	}
	if 2*spread >= judged {
		return "", ""
	}
	return fmt.Sprintf("retry delays are not jittered: at %d of %d retry numbers most waits lie within max(%s, an eighth of their median) of the median (%s): clients that failed together retry together",
		judged-spread, judged, jitterMinBand, tightest), ""
}

func median(d []time.Duration) time.Duration { return quantile(d, 0.5) }

// quantile is the q-quantile of d (linear interpolation between ranks).
func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	pos := q * float64(len(s)-1)
	lo := int(pos)
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	frac := pos - float64(lo)
	return s[lo] + time.Duration(frac*float64(s[lo+1]-s[lo]))
}

// roundGap renders a measured duration at a useful precision.
func roundGap(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}
