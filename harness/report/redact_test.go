package report_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/onceproof/onceproof/harness/report"
)

// TestRedactorReachesEveryString: a secret leaves every string and byte
// slice of a report — attempts, requests, headers, responses, the server's
// log — and every line written through its writer.
func TestRedactorReachesEveryString(t *testing.T) {
	var r report.Redactor
	r.Add("TOKEN", "hunter2")
	r.Add("EMPTY", "")
	rep := &report.Report{Tools: []report.ToolReport{{Name: "t", ServerLog: "token hunter2", Scenarios: []report.ScenarioReport{{
		ID: "lost-response", Reason: "saw hunter2",
		Counterexample: &report.Counterexample{Requests: []report.Request{{Wire: "Authorization: Bearer hunter2", Env: map[string]string{"K": "hunter2"}}},
			Attempts: []report.Attempt{{Error: "hunter2", Headers: map[string]string{"X": "hunter2"}, Response: []byte(`{"t":"hunter2"}`),
				Sent: &report.Request{Wire: "hunter2"}}}},
	}}}}}
	r.Report(rep)
	s := fmt.Sprintf("%+v", *rep)
	assert.NotContains(t, s, "hunter2")
	c := rep.Tools[0].Scenarios[0].Counterexample
	assert.Equal(t, "Authorization: Bearer [redacted TOKEN]", c.Requests[0].Wire)
	assert.Equal(t, `{"t":"[redacted TOKEN]"}`, string(c.Attempts[0].Response))
	assert.Equal(t, "[redacted TOKEN]", c.Attempts[0].Headers["X"])
	assert.Equal(t, "[redacted TOKEN]", c.Attempts[0].Sent.Wire)

	var b bytes.Buffer
	w := r.Writer(&b)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { fmt.Fprintf(w, "line with hunter2\n") })
	}
	wg.Wait()
	assert.NotContains(t, b.String(), "hunter2")
	assert.Equal(t, 8, bytes.Count(b.Bytes(), []byte("[redacted TOKEN]")))
}
