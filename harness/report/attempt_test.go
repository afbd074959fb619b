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
