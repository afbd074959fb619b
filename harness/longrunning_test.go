package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/faults"
)

// jobServer is a long-running tool: POST /jobs answers 202 {"id":"j-N"}
// with Location: /jobs/j-N,
// GET /jobs/j-N says {"state":"running"} for its first poll and
// {"state":"done"} after; GET /count?marker= counts the started jobs.
func jobServer(t *testing.T) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	var bodies []string
	polled := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.URL.Path == "/jobs":
			b, _ := io.ReadAll(r.Body)
			bodies = append(bodies, string(b))
			w.Header().Set("Location", fmt.Sprintf("/jobs/j-%d", len(bodies)))
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprintf(w, `{"id":"j-%d","job":{"name":"j-%d"}}`, len(bodies), len(bodies))
		case strings.HasPrefix(r.URL.Path, "/jobs/j-"):
			var n int
			if _, err := fmt.Sscanf(r.URL.Path, "/jobs/j-%d", &n); err != nil || n < 1 || n > len(bodies) {
				http.NotFound(w, r)
				return
			}
			state := "running"
			if polled[r.URL.Path] {
				state = "done"
			}
			polled[r.URL.Path] = true
			fmt.Fprintf(w, `{"state":%q,"accept":%q}`, state, r.Header.Get("Accept"))
		case r.URL.Path == "/count":
			n := 0
			for _, b := range bodies {
				if strings.Contains(b, r.URL.Query().Get("marker")) {
					n++
				}
			}
			fmt.Fprintf(w, `{"count":%d}`, n)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// jobConfig is a long-running tool of srv with lr as its section.
func jobConfig(t *testing.T, srv *httptest.Server, lr LongRunningConfig) HTTPConfig {
	t.Helper()
	o, err := NewHTTPOracle(srv.URL+"/count?marker={{.Marker}}", "/count")
	require.NoError(t, err)
	return HTTPConfig{Name: "jobs", URL: srv.URL + "/jobs", Body: `{"m":"{{.Marker}}"}`, ResultID: "/id", Oracle: o, LongRunning: &lr}
}

// goodJobs is a long_running section that follows jobServer.
func goodJobs(srv *httptest.Server) LongRunningConfig {
	return LongRunningConfig{StatusURL: srv.URL + "/jobs/{{.OperationID}}", StatusHeaders: map[string]string{"Accept": "application/{{.Pick \"json\"}}"},
		State: "/state", Done: []string{"done"}, Failed: []string{"failed"}}
}

func TestNewHTTPToolLongRunningErrors(t *testing.T) {
	srv := jobServer(t)
	for _, tc := range []struct {
		reason string
		change func(c *HTTPConfig)
		field  string
	}{
		{"a status url that names no operation", func(c *HTTPConfig) { c.LongRunning.StatusURL = srv.URL + "/jobs/latest" }, "long_running.status.url"},
		{"a status url on another host", func(c *HTTPConfig) { c.LongRunning.StatusURL = "http://127.0.0.2:1/jobs/{{.OperationID}}" }, "long_running.status.url"},
		{"a status url template that does not parse", func(c *HTTPConfig) { c.LongRunning.StatusURL = srv.URL + "/jobs/{{.OperationID" }, "long_running.status.url"},
		{"a status header template that does not parse", func(c *HTTPConfig) { c.LongRunning.StatusHeaders = map[string]string{"X": "{{"} }, "long_running.status.headers.X"},
		{"no operation id pointer and no result_id", func(c *HTTPConfig) { c.ResultID = "" }, "long_running.operation_id"},
		{"a bad operation id pointer", func(c *HTTPConfig) { c.LongRunning.OperationID = "id" }, "long_running.operation_id"},
		{"no state pointer", func(c *HTTPConfig) { c.LongRunning.State = "" }, "long_running.done.pointer"},
		{"no done values", func(c *HTTPConfig) { c.LongRunning.Done = nil }, "long_running.done.values"},
		{"a value both done and failed", func(c *HTTPConfig) { c.LongRunning.Failed = []string{"done"} }, "long_running.done.failed"},
		{"an id from a header and a pointer", func(c *HTTPConfig) { c.LongRunning.OperationIDHeader, c.LongRunning.OperationID = "Location", "/id" }, "long_running.operation_id_header"},
		{"a header's id resolved to another host", func(c *HTTPConfig) {
			c.LongRunning.OperationIDHeader, c.LongRunning.StatusURL = "Location", "//127.0.0.2{{.OperationID}}"
		}, "long_running.status.url"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			c := jobConfig(t, srv, goodJobs(srv))
			tc.change(&c)
			_, err := NewHTTPTool(c)
			var fe *FieldError
			require.ErrorAs(t, err, &fe, tc.reason)
			assert.Equal(t, tc.field, fe.Field, "%v", err)
		})
	}
	tool, err := NewHTTPTool(jobConfig(t, srv, goodJobs(srv)))
	require.NoError(t, err)
	assert.True(t, tool.LongRunning())
	assert.Equal(t, DefaultFinishWithin, tool.FinishWithin(), "the default")
	plain, err := NewHTTPTool(HTTPConfig{Name: "p", URL: srv.URL + "/jobs", Body: `{"m":"{{.Marker}}"}`, Oracle: tool.Oracle()})
	require.NoError(t, err)
	assert.False(t, plain.LongRunning())
	_, err = plain.PrepareStatus(Operation{}, "j-1")
	assert.ErrorIs(t, err, ErrNotLongRunning)
}

func TestPrepareStatusAndReadStatus(t *testing.T) {
	srv := jobServer(t)
	lr := goodJobs(srv)
	lr.OperationID, lr.StatusMethod, lr.FinishWithin = "/job/name", http.MethodPost, time.Second
	tool, err := NewHTTPTool(jobConfig(t, srv, lr))
	require.NoError(t, err)
	assert.Equal(t, time.Second, tool.FinishWithin())
	op := Operation{ID: "op-1", Key: "k-1", Marker: "m-1", Seed: 1}
	call, err := tool.PrepareStatus(op, "j-7")
	require.NoError(t, err)
	host := strings.TrimPrefix(srv.URL, "http://")
	assert.Equal(t, "POST /jobs/j-7 HTTP/1.1\r\nHost: "+host+"\r\nAccept: application/json\r\nUser-Agent: onceproof\r\nContent-Length: 0\r\n\r\n", string(call.Wire))
	assert.Equal(t, "POST /jobs/j-7", call.Summary)

	trigger := Attempt{Outcome: OK, Status: 202, Response: []byte(`{"id":"x","job":{"name":"j-7"}}`)}
	assert.Equal(t, "j-7", tool.OperationID(trigger), "operation_id wins over result_id")
	trigger.Status = 409
	assert.Empty(t, tool.OperationID(trigger), "only a 2xx names the operation")

	for _, tc := range []struct {
		reason string
		a      Attempt
		want   OperationStatus
	}{
		{"a state among done", Attempt{Outcome: OK, Status: 200, Response: []byte(`{"state":"done"}`)}, OperationStatus{StateDone, "done"}},
		{"a state among failed", Attempt{Outcome: OK, Status: 200, Response: []byte(`{"state":"failed"}`)}, OperationStatus{StateFailed, "failed"}},
		{"any other state runs", Attempt{Outcome: OK, Status: 200, Response: []byte(`{"state":"queued"}`)}, OperationStatus{StateRunning, "queued"}},
		{"no state", Attempt{Outcome: OK, Status: 200, Response: []byte(`{}`)}, OperationStatus{State: StateUnknown}},
		{"404", Attempt{Outcome: OK, Status: 404}, OperationStatus{State: StateNotFound}},
		{"410", Attempt{Outcome: OK, Status: 410}, OperationStatus{State: StateNotFound}},
		{"a 503 says nothing", Attempt{Outcome: OK, Status: 503, Response: []byte(`{"state":"done"}`)}, OperationStatus{State: StateUnknown}},
		{"no answer", Attempt{Outcome: Unknown}, OperationStatus{State: StateUnknown}},
	} {
		assert.Equal(t, tc.want, tool.ReadStatus(tc.a), tc.reason)
	}
	byHeader := goodJobs(srv)
	byHeader.OperationIDHeader, byHeader.StatusURL = "Location", "{{.OperationID}}"
	htool, err := NewHTTPTool(jobConfig(t, srv, byHeader))
	require.NoError(t, err)
	assert.Equal(t, "/jobs/j-3", htool.OperationID(Attempt{Outcome: OK, Status: 202, Headers: map[string]string{"Location": "/jobs/j-3"}}))
	call, err = htool.PrepareStatus(op, "/jobs/j-3")
	require.NoError(t, err)
	assert.Equal(t, "GET /jobs/j-3", call.Summary, "resolved against the tool's url")
	call, err = htool.PrepareStatus(op, srv.URL+"/jobs/j-4")
	require.NoError(t, err)
	assert.Equal(t, "GET /jobs/j-4", call.Summary, "an absolute url on the tool's host")
	_, err = htool.PrepareStatus(op, "http://127.0.0.2:9/jobs/j-3")
	assert.ErrorIs(t, err, ErrStatusCall, "never past the proxy")

	assert.True(t, StateDone.Finished())
	assert.True(t, StateFailed.Finished())
	assert.False(t, StateRunning.Finished())
}

// TestSessionPoll: a status poll goes through the proxy and is recorded as
// one, with the state it read.
func TestSessionPoll(t *testing.T) {
	srv := jobServer(t)
	tool, err := NewHTTPTool(jobConfig(t, srv, goodJobs(srv)))
	require.NoError(t, err)
	ctx := context.Background()
	backend := faults.NewEmbedded()
	defer backend.Close(ctx)
	s, err := Open(ctx, backend, tool, KeyUUID)
	require.NoError(t, err)
	defer s.Close(ctx)
	op := s.NewOp(1)
	call, err := tool.Prepare(op)
	require.NoError(t, err)
	a, err := s.Do(ctx, call, nil, time.Now(), GiveUp{})
	require.NoError(t, err)
	id := tool.OperationID(a)
	require.Equal(t, "j-1", id)
	for _, want := range []OperationStatus{{StateRunning, "running"}, {StateDone, "done"}} {
		p, st, err := s.Poll(ctx, op, id, time.Now())
		require.NoError(t, err)
		assert.Equal(t, want, st)
		assert.Equal(t, string(want.State), p.Poll, "the attempt says what it read")
		assert.Equal(t, 200, p.Status)
		assert.Contains(t, p.Body, `"accept":"application/json"`, "the status headers were sent")
		assert.Equal(t, -1, p.Before, "a poll counts no effects")
	}
	p, st, err := s.Poll(ctx, op, "j-9", time.Now())
	require.NoError(t, err)
	assert.Equal(t, StateNotFound, st.State)
	assert.Equal(t, "not-found", p.Poll)

	plain, err := NewHTTPTool(HTTPConfig{Name: "p", URL: srv.URL + "/jobs", Body: `{"m":"{{.Marker}}"}`, Oracle: tool.Oracle()})
	require.NoError(t, err)
	s2, err := Open(ctx, backend, plain, KeyUUID)
	require.NoError(t, err)
	defer s2.Close(ctx)
	_, _, err = s2.Poll(ctx, op, id, time.Now())
	assert.ErrorIs(t, err, ErrNotLongRunning)
}

// TestPreflightFollowsTheOperation: a long_running section that cannot
// follow the operation a plain call started is the spec's error, found by
// the preflight call and located at its field, not the tool's failure.
func TestPreflightFollowsTheOperation(t *testing.T) {
	srv := jobServer(t)
	for _, tc := range []struct {
		reason string
		change func(lr *LongRunningConfig)
		field  string
	}{
		{"a section that follows the operation passes", func(*LongRunningConfig) {}, ""},
		{"a status url the tool answers 404 for", func(lr *LongRunningConfig) { lr.StatusURL = srv.URL + "/jobs/x{{.OperationID}}" }, "long_running.status.url"},
		{"a status url that answers something without a state", func(lr *LongRunningConfig) { lr.StatusURL = srv.URL + "/count?op={{.OperationID}}" }, "long_running.done.pointer"},
		{"a state pointer that finds nothing", func(lr *LongRunningConfig) { lr.State = "/status" }, "long_running.done.pointer"},
		{"an operation id pointer that finds nothing", func(lr *LongRunningConfig) { lr.OperationID = "/operation" }, "long_running.operation_id"},
		{"a Location header that names the operation, followed as it is", func(lr *LongRunningConfig) {
			lr.OperationIDHeader, lr.StatusURL = "location", "{{.OperationID}}"
		}, ""},
		{"a relative status url", func(lr *LongRunningConfig) { lr.StatusURL = "/jobs/{{.OperationID}}" }, ""},
		{"a header the answer does not have", func(lr *LongRunningConfig) {
			lr.OperationIDHeader, lr.StatusURL = "Operation-Location", "{{.OperationID}}"
		}, "long_running.operation_id_header"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			lr := goodJobs(srv)
			tc.change(&lr)
			c := jobConfig(t, srv, lr)
			tool, err := NewHTTPTool(c)
			require.NoError(t, err)
			backend := faults.NewEmbedded()
			defer backend.Close(context.Background())
			s, err := Open(context.Background(), backend, tool, KeyUUID)
			require.NoError(t, err)
			defer s.Close(context.Background())
			_, err = s.Preflight(context.Background(), false)
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrPreflight)
			assert.ErrorIs(t, err, ErrStatusCall)
			assert.False(t, errors.Is(err, ErrUnreachable))
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field, "%v", err)
		})
	}
}
