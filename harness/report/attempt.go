package report

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Outcome is the three-valued result of one attempt.
type Outcome string

const (
	// OK means a response arrived: the caller knows what happened.
	OK Outcome = "ok"
	// Failed means the request provably was not delivered (the connection
	// was refused or never established).
	Failed Outcome = "failed"
	// Unknown means the request may or may not have been delivered (EOF,
	// reset, timeout after the connection was established).
	Unknown Outcome = "unknown"
)

// Phase is where on an attempt's way its fault struck (the values of
// package faults' Phase: before-server, torn, response-lost, held,
// dependency, crash).
type Phase string

// The phases.
const (
	PhaseBeforeServer Phase = "before-server"
	PhaseTorn         Phase = "torn"
	PhaseResponseLost Phase = "response-lost"
	PhaseHeld         Phase = "held"
	PhaseDependency   Phase = "dependency"
	PhaseCrash        Phase = "crash"
)

// Phases lists every phase (the same as package faults' Phases; a test ties
// them).
func Phases() []Phase {
	return []Phase{PhaseBeforeServer, PhaseTorn, PhaseResponseLost, PhaseHeld, PhaseDependency, PhaseCrash}
}

// Failure is how an attempt that got no answer ended, as the harness saw
// it on its connection.
type Failure string

// The failures.
const (
	FailureTimeout   Failure = "timeout"   // the caller's deadline passed
	FailureGaveUp    Failure = "gave-up"   // the caller gave up as its plan said
	FailureRefused   Failure = "refused"   // the connection was refused
	FailureReset     Failure = "reset"     // the connection was reset
	FailureEOF       Failure = "eof"       // the connection closed without an answer
	FailureAbandoned Failure = "abandoned" // the run (or the trial) ended first
	FailureOther     Failure = "other"
)

// Failures lists every failure kind (the schema's enum; a test ties them).
func Failures() []Failure {
	return []Failure{FailureTimeout, FailureGaveUp, FailureRefused, FailureReset, FailureEOF, FailureAbandoned, FailureOther}
}

// LookupAnswer is what a lookup of an operation by its identity said:
// found, not-found or unknown (no answer, or one that says neither).
type LookupAnswer string

// The lookup answers.
const (
	LookupFound    LookupAnswer = "found"
	LookupNotFound LookupAnswer = "not-found"
	LookupUnknown  LookupAnswer = "unknown"
)

// Setup is what an attempt's fault did to the proxy: Toxics added in
// order, or, with Disable, the proxy's listener closed.
type Setup struct {
	Toxics  []Toxic `json:"toxics,omitempty"`
	Disable bool    `json:"disable,omitempty"`
}

// Toxic is one Toxiproxy toxic as its API takes it.
type Toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     string         `json:"stream"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

// Attempt is the record of one transmission.
type Attempt struct {
	// N numbers attempts within a trial from 1.
	N int `json:"n"`
	// Op is the operation id; Marker its marker.
	Op     string `json:"op"`
	Marker string `json:"marker,omitempty"`
	// Fault is the fault armed for this attempt ("" for none).
	Fault string `json:"fault,omitempty"`
	// Delay is the wait before the attempt (the retry backoff).
	Delay time.Duration `json:"delay_ns"`
	// Deadline is how long the caller waited for an answer before giving
	// up: the tool's timeout unless the plan had it give up sooner (then
	// the time it did).
	Deadline time.Duration `json:"deadline_ns,omitempty"`
	// Start and End are offsets from the start of the trial.
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
	// Outcome is ok, failed or unknown.
	Outcome  Outcome `json:"outcome"`
	Status   int     `json:"status,omitempty"`
	ResultID string  `json:"result_id,omitempty"`
	// Body is the start of the response body.
	Body string `json:"body,omitempty"`
	// Headers are the values of the response headers the tool's contract
	// compares (replay_headers, replayed_header), by canonical name; an
	// absent header is left out.
	Headers map[string]string `json:"headers,omitempty"`
	// Response is the whole response body, for comparing replays (not in
	// the JSON report, which keeps Body).
	Response []byte `json:"-"`
	Error    string `json:"error,omitempty"`
	// Failure is how an attempt without an answer ended ("" with one).
	Failure Failure `json:"failure,omitempty"`
	// Note says how the attempt went out (an MCP call's session).
	Note string `json:"note,omitempty"`
	// Replica is the replica that served the attempt (from 1), for a tool
	// that runs as several; 0 otherwise.
	Replica int `json:"replica,omitempty"`
	// Link names the dependency an outbound attempt of the tool went to
	// (its downstream provider); "" for the caller's attempts. Key is the
	// idempotency key that outbound attempt carried ("" for none).
	Link string `json:"link,omitempty"`
	Key  string `json:"key,omitempty"`
	// Lookup is set on a lookup of the operation by its identity (the
	// tool's lookup, asked after an ambiguous attempt): what it answered.
	// Its Before and After are the oracle's counts before the lookup was
	// sent and after its answer arrived. "" for every other attempt.
	Lookup LookupAnswer `json:"lookup,omitempty"`
	// Poll is set on a status poll of a long-running operation: the state
	// it read (running, done, failed, not-found, unknown, with the value
	// the tool gave in parentheses when it differs: "done (succeeded)");
	// "" for every other attempt.
	Poll string `json:"poll,omitempty"`
	// Before and After are the oracle's Counts for the marker around the
	// attempt (-1 when not taken, e.g. for overlapping attempts).
	Before int `json:"before"`
	After  int `json:"after"`
	// Phase, Setup and Request say what the attempt was, for reproducers
	// and renderers that must not read Fault's text (see attempt_record.go).
	Phase   Phase  `json:"phase,omitempty"`
	Setup   *Setup `json:"setup,omitempty"`
	Request int    `json:"request,omitempty"`

	// Sent is the request the attempt sent, until NewCounterexample
	// numbers it (not in the JSON report).
	Sent *Request `json:"-"`
}

// ResponseBody is the whole response body the attempt got (nil without a
// response, and in a report read back from JSON, which keeps only Body).
func (a Attempt) ResponseBody() []byte { return a.Response }

// GaveUp is the caller's deadline when it met it (an attempt that timed out
// or was abandoned), "-" otherwise.
func (a Attempt) GaveUp() string {
	if a.Outcome == OK || a.Deadline <= 0 || a.End-a.Start < a.Deadline {
		return "-"
	}
	return "after " + Round(a.Deadline)
}

// HeaderText lists the recorded headers, "Location: /t/1; Idempotent-Replayed: true"
// ("" when none were recorded).
func (a Attempt) HeaderText() string {
	names := make([]string, 0, len(a.Headers))
	for k := range a.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + ": " + a.Headers[k]
	}
	return strings.Join(parts, "; ")
}

// Line is the attempt as one log line.
func (a Attempt) Line() string {
	s := fmt.Sprintf("#%d %s fault=%s delay=%s outcome=%s", a.N, ShortOp(a.Op), Dash(a.Fault), Round(a.Delay), a.Outcome)
	if a.Replica > 0 {
		s += fmt.Sprintf(" replica=%d", a.Replica)
	}
	if a.Link != "" {
		s += fmt.Sprintf(" to=%s key=%s", a.Link, Dash(a.Key))
	}
	if a.Lookup != "" {
		s += " lookup=" + string(a.Lookup)
	}
	if a.Poll != "" {
		s += " poll=" + strconv.Quote(a.Poll)
	}
	if a.Status != 0 {
		s += fmt.Sprintf(" status=%d", a.Status)
	}
	if a.ResultID != "" {
		s += " result_id=" + a.ResultID
	}
	if a.Before >= 0 || a.After >= 0 {
		s += " effects=" + Counts(a.Before, a.After)
	}
	if h := a.HeaderText(); h != "" {
		s += " headers=" + strconv.Quote(h)
	}
	if a.Error != "" {
		s += " error=" + strconv.Quote(a.Error)
	}
	return s
}

// Request is one distinct request of a counterexample, as it was sent, so
// that it can be sent again without onceproof (a reproducer).
type Request struct {
	// Transport names the transport's row (spec.Transports): "http",
	// "https", "mcp", "mcp-stdio".
	Transport string `json:"transport"`
	// Target is the host:port the tool listens on (behind the proxy).
	Target string `json:"target"`
	// Wire is the raw HTTP request, or an MCP tools/call's params (JSON).
	Wire string `json:"wire"`
	// Endpoint is the MCP server's URL, for an MCP request.
	Endpoint string `json:"endpoint,omitempty"`
	// Command, Dir and Env say how to start a stdio MCP server (Env's
	// values as the spec's templates: a secret stays {{.Env "NAME"}}).
	Command []string          `json:"command,omitempty"`
	Dir     string            `json:"dir,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// key identifies r among the requests of a counterexample.
func (r Request) key() string {
	b, _ := json.Marshal(r) // a Request always encodes
	return string(b)
}

// NewCounterexample is the evidence of a violation: the plan, the
// violation, the attempts (numbered) and the effects, with the distinct
// requests the attempts sent listed once and each attempt pointing at its
// own (Attempt.Request, from 1).
func NewCounterexample(plan, violation string, attempts []Attempt, effects []Effect) *Counterexample {
	c := &Counterexample{Plan: plan, Violation: violation, Effects: effects}
	index := map[string]int{}
	for _, a := range attempts {
		if a.Sent != nil {
			k := a.Sent.key()
			n, ok := index[k]
			if !ok {
				c.Requests = append(c.Requests, *a.Sent)
				n = len(c.Requests)
				index[k] = n
			}
			a.Request = n
		}
		c.Attempts = append(c.Attempts, a)
	}
	return c
}

// columns says which optional columns an attempt table shows: the
// replica that served each attempt (a tool that runs as several), where
// an attempt went with the key it carried (a tool whose own outbound calls
// are recorded), what a lookup answered (a trial that asked one), and
// which attempts were status polls and what they read (a long-running
// tool).
type columns struct{ replica, link, lookup, poll bool }

func attemptColumns(as []Attempt) columns {
	var c columns
	for _, a := range as {
		c.replica = c.replica || a.Replica > 0
		c.link = c.link || a.Link != ""
		c.lookup = c.lookup || a.Lookup != ""
		c.poll = c.poll || a.Poll != ""
	}
	return c
}

func (c columns) header() string {
	s := ""
	if c.replica {
		s += "replica\t"
	}
	if c.link {
		s += "to\tkey\t"
	}
	if c.lookup {
		s += "lookup\t"
	}
	if c.poll {
		s += "call\t"
	}
	return s
}

func (c columns) cells(a Attempt) string {
	s := ""
	if c.replica {
		s += DashInt(a.Replica) + "\t"
	}
	if c.link {
		switch {
		case a.Link == "":
			s += "tool\t-\t"
		case a.Key == "":
			s += a.Link + "\tnone\t"
		default:
			s += a.Link + "\t" + shortKey(a.Key) + "\t"
		}
	}
	if c.lookup {
		s += Dash(string(a.Lookup)) + "\t"
	}
	if c.poll {
		if a.Poll != "" {
			s += "status: " + a.Poll + "\t"
		} else {
			s += "trigger\t"
		}
	}
	return s
}

// shortKey keeps the start of a long key: enough to tell keys apart in a
// table.
func shortKey(k string) string {
	if r := []rune(k); len(r) > 12 {
		return string(r[:10]) + "…"
	}
	return k
}

// LaneNote is what a timeline lane adds to an attempt's label: what a
// lookup answered, its replica, or where an outbound attempt went and with
// which key.
func (a Attempt) LaneNote() string {
	switch {
	case a.Lookup != "":
		return "lookup: " + strings.ReplaceAll(string(a.Lookup), "-", " ")
	case a.Poll != "":
		return "status poll: " + a.Poll
	case a.Link != "" && a.Key == "":
		return "→ " + a.Link + " (no key)"
	case a.Link != "":
		return "→ " + a.Link + " key " + shortKey(a.Key)
	case a.Replica > 0:
		return fmt.Sprintf("replica %d", a.Replica)
	}
	return ""
}
