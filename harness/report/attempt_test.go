package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/report"
)

// TestAttemptColumns: the replica that served each attempt, and where an
// outbound attempt went with which key, show in the attempt table, the
// JSON report (which the schema accepts).
func TestAttemptColumns(t *testing.T) {
	c := &report.Counterexample{Plan: "p", Violation: "v", Attempts: []report.Attempt{
		{N: 1, Op: "op-x-00000001", Outcome: report.OK, Status: 201, Replica: 2, Before: 0, After: 1, End: time.Millisecond},
		{N: 2, Op: "op-x-00000001", Outcome: report.Unknown, Link: "payments", Key: "charge-0123456789abcdef", Fault: "lose-response (the provider did the work)", Before: 0, After: 1, Start: time.Millisecond, End: 2 * time.Millisecond},
		{N: 3, Op: "op-x-00000001", Outcome: report.OK, Status: 201, Link: "payments", Before: 1, After: 2, Start: 2 * time.Millisecond, End: 3 * time.Millisecond},
	}}
	text := c.String()
	assert.Contains(t, text, "#  op    replica  to        key          fault")
	assert.Regexp(t, `1  op-1  2 +tool +- `, text)
	assert.Regexp(t, `2  op-1  - +payments +charge-012… `, text)
	assert.Regexp(t, `3  op-1  - +payments +none `, text)
	assert.NotContains(t, (&report.Counterexample{Attempts: []report.Attempt{{N: 1, Op: "op-1"}}}).String(), "replica", "no column for one process")

	r := &report.Report{Version: report.ReportVersion, Tools: []report.ToolReport{{Name: "t", Scenarios: []report.ScenarioReport{{ID: "downstream", Verdict: report.Fail, Checks: 1, Reason: "v", Counterexample: c}}}}}
	comp := jsonschema.NewCompiler()
	schema, err := jsonschema.UnmarshalJSON(strings.NewReader(report.ReportSchema))
	require.NoError(t, err)
	require.NoError(t, comp.AddResource("report.schema.json", schema))
	sch, err := comp.Compile("report.schema.json")
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, r.WriteJSON(&b))
	assert.Contains(t, b.String(), `"replica": 2`)
	assert.Contains(t, b.String(), `"link": "payments"`)
	doc, err := jsonschema.UnmarshalJSON(&b)
	require.NoError(t, err)
	require.NoError(t, sch.Validate(doc))
}

// TestPollColumn: a long-running tool's status polls show as such, with the
// state each read, in the attempt table, the log line, the timeline's lane
// note and the JSON report (which the schema accepts); every other
// format renders the same counterexample.
func TestPollColumn(t *testing.T) {
	c := &report.Counterexample{Plan: "p", Violation: "attempt 3: the status call answered 404", Rule: report.RuleStatusPoll, Attempts: []report.Attempt{
		{N: 1, Op: "op-x-00000001", Outcome: report.OK, Status: 202, ResultID: "t-1", Before: 0, After: 1, End: time.Millisecond},
		{N: 2, Op: "op-x-00000001", Outcome: report.OK, Status: 200, ResultID: "t-1", Poll: "running", Before: -1, After: -1, Start: time.Millisecond, End: 2 * time.Millisecond},
		{N: 3, Op: "op-x-00000001", Outcome: report.OK, Status: 404, Poll: "not-found", Before: -1, After: -1, Start: 22 * time.Millisecond, End: 23 * time.Millisecond},
	}}
	text := c.String()
	assert.Contains(t, text, "#  op    call               fault")
	assert.Regexp(t, `1  op-1  trigger +- `, text)
	assert.Regexp(t, `2  op-1  status: running +- `, text)
	assert.Regexp(t, `3  op-1  status: not-found +- `, text)
	assert.Contains(t, text, "violation (status-poll)")
	assert.NotContains(t, (&report.Counterexample{Attempts: []report.Attempt{{N: 1, Op: "op-1"}}}).String(), "trigger", "no column without polls")
	assert.Contains(t, c.Attempts[2].Line(), `poll="not-found"`)
	assert.NotContains(t, c.Attempts[0].Line(), "poll=")
	assert.Equal(t, "status poll: running", c.Attempts[1].LaneNote())

	r := &report.Report{Version: report.ReportVersion, Tools: []report.ToolReport{{Name: "t", Scenarios: []report.ScenarioReport{{ID: "long-running", Verdict: report.Fail, Checks: 1, Reason: c.Violation, Counterexample: c}}}}}
	comp := jsonschema.NewCompiler()
	schema, err := jsonschema.UnmarshalJSON(strings.NewReader(report.ReportSchema))
	require.NoError(t, err)
	require.NoError(t, comp.AddResource("report.schema.json", schema))
	sch, err := comp.Compile("report.schema.json")
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, r.WriteJSON(&b))
	assert.Contains(t, b.String(), `"poll": "not-found"`)
	assert.Contains(t, b.String(), `"rule": "status-poll"`)
	doc, err := jsonschema.UnmarshalJSON(&b)
	require.NoError(t, err)
	require.NoError(t, sch.Validate(doc))

	var md, junit bytes.Buffer
	require.NoError(t, r.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "long-running")
	assert.Contains(t, md.String(), "status: not-found")
	require.NoError(t, r.WriteJUnit(&junit))
	assert.Contains(t, junit.String(), `type="status-poll"`)
	assert.Contains(t, junit.String(), "status: not-found")
}
