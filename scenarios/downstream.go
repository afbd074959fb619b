package scenarios

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/capture"
	"github.com/onceproof/onceproof/harness/report"
)

// downstreamAnswers are the faults a plan draws for the tool's calls to its
// dependency, the one shrinking goes to first.
var downstreamAnswers = []capture.Answer{
	{Kind: capture.KindLose},
	{Kind: capture.KindReset},
	{Kind: capture.KindStatus, Status: http.StatusServiceUnavailable},
}

// downstreamQuiet is how long the provider must hear nothing more of an
// operation before its calls are judged.
const downstreamQuiet = 50 * time.Millisecond

// downstream: the tool's own calls to its HTTP dependency (a payment
// provider, played by onceproof) meet lost responses (after the provider did
// the work), resets (before it did) and 503s, drawn per outbound attempt;
// the caller retries while the tool answers 5xx or nothing. The provider
// must perform exactly one effect for the operation (it honours keys: one
// per distinct key among the calls it committed), every call must carry a
// key, every retry of the operation the same one, and no other operation's.
func downstream(t *rapid.T, cfg Config, tool harness.Tool) func(*trial) (result, error) {
	d := tool.(harness.Downstreamed).Downstream()
	name := d.Name()
	seed := drawSeed(t, "payload")
	n := rapid.IntRange(1, 4).Draw(t, "outbound-faults")
	answers := make([]capture.Answer, n)
	words := make([]string, n)
	for i := range answers {
		answers[i] = rapid.SampledFrom(downstreamAnswers).Draw(t, fmt.Sprintf("outbound%d", i))
		words[i] = describeAnswer(answers[i])
	}
	retryDelay := drawDelay(t, 0, cfg.MaxBackoff, "delay-retry")
	plan := fmt.Sprintf("the tool's calls to %s meet %s, later ones succeed; the caller retries after %s while the tool answers 5xx or nothing",
		name, strings.Join(words, ", then "), retryDelay)
	after := " after faults on the tool's calls to " + name

	return func(tr *trial) (result, error) {
		res := result{plan: plan}
		op, call, err := tr.prepare(seed)
		if err != nil {
			return res, err
		}
		x := d.Expect(op.Marker, answers)
		defer x.Close()
		rec := &outboundRecorder{d: d, x: x, op: op, origin: tr.origin}
		tr.mu.Lock()
		tr.outbound = rec.take
		tr.mu.Unlock()

		final, err := tr.do(call, nil, 0)
		if err != nil {
			return res, err
		}
		if final.Outcome != harness.OK || final.Status == http.StatusConflict || final.Status/100 == 5 {
			if final, err = tr.deliver(call, retryDelay); err != nil {
				return res, err
			}
		}
		acked := final.Outcome == harness.OK && is2xx(final.Status)
		if err := tr.settleOutbound(x, acked); err != nil {
			return res, err
		}
		if err := tr.judge(&res, op, final, after); err != nil {
			return res, err
		}
		log, ns := x.All(), tr.outboundNumbers(name)
		if len(ns) != len(log) {
			return res, fmt.Errorf("downstream %s: %d outbound attempts recorded, %d in the trial's log", name, len(log), len(ns))
		}
		if len(log) == 0 {
			// Nothing to judge: a tool that calls the provider without the
			// marker looks the same as one that does not call it.
			if res.violation == "" {
				res.invalid = fmt.Sprintf("the tool made no call to %s whose body or URL carried the operation's marker %s (onceproof attributes the tool's calls by it)", name, op.Marker)
			}
			return res, nil
		}
		effects := harness.DownstreamEffects(log)
		res.effects = append(res.effects, harness.Effect{Marker: rec.marker(), Count: effects, Want: 1})
		judgeDownstream(&res, d, log, ns, effects, final)
		switch {
		case res.violation != "":
		case len(log) == 1 && res.invalid == "":
			res.invalid = fmt.Sprintf("the tool called %s once (attempt %d): it never retried after the fault, so its retries were not shown", name, ns[0])
		}
		return res, nil
	}
}

// judgeDownstream checks the operation's outbound attempts log (numbered ns
// in the trial's log) against what the provider must see: exactly one
// effect when the tool confirmed the operation (final), at most one
// otherwise; then a key on every call, the same key on every retry, and no
// key of another operation.
func judgeDownstream(res *result, d *harness.Downstream, log []harness.Outbound, ns []int, effects int, final harness.Attempt) {
	name := d.Name()
	switch {
	case effects > 1:
		res.violation, res.kind = "", ""
		res.failf(report.RuleDownstreamOnce, "%s performed %s for one operation (%s), want exactly 1: the tool's retries to it were not deduplicated", name, nEffects(effects), keysOf(log))
	case effects == 0 && final.Outcome == harness.OK && is2xx(final.Status):
		res.violation, res.kind = "", ""
		res.failf(report.RuleDownstreamOnce, "the tool confirmed the operation (attempt %d, status %d) but %s performed none of it", final.N, final.Status, name)
	}
	for i, o := range log {
		if !o.Keyed() {
			res.failf(report.RuleDownstreamKey, "attempt %d to %s carried no %s: the provider cannot tell the tool's retry from a new request", ns[i], name, d.KeyHeader())
			return
		}
	}
	for i, o := range log {
		if o.Key != log[0].Key {
			res.failf(report.RuleDownstreamKey, "attempts %d and %d to %s carried different keys (%s, %s): every retry of one operation must reuse its key", ns[0], ns[i], name, log[0].Key, o.Key)
			return
		}
	}
	for i, o := range log {
		if o.Reused != "" {
			res.failf(report.RuleDownstreamKey, "attempt %d to %s reused the key of another operation (marker %s): the provider answers it with that operation's result", ns[i], name, o.Reused)
			return
		}
	}
}

// keysOf lists the keys of the committed calls of log, for a message.
func keysOf(log []harness.Outbound) string {
	var ks []string
	for _, o := range log {
		if !o.Committed() {
			continue
		}
		k := "no key"
		if o.Keyed() {
			k = "key " + o.Key
		}
		ks = append(ks, k)
	}
	return "committed calls: " + strings.Join(ks, ", ")
}

// describeAnswer names a drawn answer in a plan.
func describeAnswer(a capture.Answer) string {
	switch a.Kind {
	case capture.KindLose:
		return "a lost response (the provider did the work)"
	case capture.KindReset:
		return "a reset (before the provider did the work)"
	}
	return "a " + a.String()
}

// downstreamed: the downstream scenario needs a tool that calls a
// dependency onceproof plays.
func downstreamed(tool harness.Tool) error {
	if d, ok := tool.(harness.Downstreamed); !ok || d.Downstream() == nil {
		return errors.New("needs a tool with a downstream section (an HTTP dependency onceproof plays)")
	}
	return writeTool(tool)
}

// outboundRecorder turns an operation's outbound attempts into attempt
// records, with the provider's effect count before and after each.
type outboundRecorder struct {
	d      *harness.Downstream
	x      *harness.Expectation
	op     harness.Operation
	origin time.Time
	seen   []harness.Outbound
}

// marker is what the provider's effects for the operation are counted
// under in reports: the dependency's name and the operation's marker.
func (r *outboundRecorder) marker() string { return r.d.Name() + ":" + r.op.Marker }

func (r *outboundRecorder) take() []harness.Attempt {
	var out []harness.Attempt
	for _, o := range r.x.Take() {
		before := harness.DownstreamEffects(r.seen)
		r.seen = append(r.seen, o)
		a := harness.Attempt{Op: r.op.ID, Marker: r.marker(), Link: r.d.Name(),
			Start: o.Received.Sub(r.origin), End: o.Answered.Sub(r.origin),
			Before: before, After: harness.DownstreamEffects(r.seen)}
		if o.Keyed() {
			a.Key = o.Key
		}
		switch o.Answer.Kind {
		case capture.KindOK:
			a.Outcome, a.Status = harness.OK, http.StatusCreated
		case capture.KindStatus:
			a.Outcome, a.Status, a.Fault = harness.OK, o.Answer.Status, o.Answer.String()+" from the provider"
		case capture.KindLose:
			a.Outcome, a.Fault = harness.Unknown, "lose-response (the provider did the work)"
		case capture.KindReset:
			a.Outcome, a.Fault = harness.Unknown, "reset-connection (before the provider did the work)"
		}
		out = append(out, a)
	}
	return out
}

// drainOutboundLocked appends the tool's outbound attempts recorded since
// the last drain to the log; tr.mu is held.
func (tr *trial) drainOutboundLocked() {
	if tr.outbound == nil {
		return
	}
	for _, a := range tr.outbound() {
		a.N = len(tr.attempts) + 1
		tr.attempts = append(tr.attempts, a)
		if tr.log != nil {
			tr.log(a)
		}
	}
}

// settleOutbound waits until the provider has heard nothing more of the
// operation for downstreamQuiet (and, when the tool confirmed it, until the
// provider did some of it), at most the tool's timeout, then records the
// calls that came after the last attempt.
func (tr *trial) settleOutbound(x *harness.Expectation, acked bool) error {
	deadline := time.Now().Add(tr.s.Tool().Timeout())
	last, quiet := len(x.All()), time.Now()
	for time.Now().Before(deadline) {
		if err := tr.sleep(5 * time.Millisecond); err != nil {
			return err
		}
		all := x.All()
		if len(all) != last {
			last, quiet = len(all), time.Now()
			continue
		}
		if time.Since(quiet) >= downstreamQuiet && (!acked || harness.DownstreamEffects(all) > 0) {
			break
		}
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.drainOutboundLocked()
	return nil
}

// outboundNumbers are the numbers of the attempts to the dependency name in
// the trial's log, in order.
func (tr *trial) outboundNumbers(name string) []int {
	var ns []int
	for _, a := range tr.attemptLog() {
		if a.Link == name {
			ns = append(ns, a.N)
		}
	}
	return ns
}
