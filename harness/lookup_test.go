package harness_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
)

func TestLookupConfigErrorsNameTheField(t *testing.T) {
	oracle := harness.OracleFunc(func(context.Context, string) (int, error) { return 0, nil })
	for _, tc := range []struct {
		lookup harness.LookupConfig
		field  string
		reason string
	}{
		{harness.LookupConfig{URL: "http://127.0.0.1:9/t/{{.Key}}"}, "lookup.url", "another port: the lookup goes through the tool's proxy"},
		{harness.LookupConfig{URL: "https://127.0.0.1:8080/t/{{.Key}}"}, "lookup.url", "another scheme"},
		{harness.LookupConfig{URL: "http://127.0.0.1:8080/t/latest"}, "lookup.url", "names no operation"},
		{harness.LookupConfig{URL: "http://127.0.0.1:8080/t/{{.Key"}, "lookup.url", "a bad template"},
		{harness.LookupConfig{URL: "http://127.0.0.1:8080/t/{{.Key}}", Headers: map[string]string{"X-A": "{{.Nope}}"}}, "lookup.headers.X-A", "a header that does not render"},
		{harness.LookupConfig{URL: "http://127.0.0.1:8080/t/{{.Key}}", Found: []int{200}, NotFound: []int{200}}, "lookup.not_found", "an answer cannot mean both"},
		{harness.LookupConfig{URL: "http://127.0.0.1:8080/t/{{.Key}}", Found: []int{42}}, "lookup", "not a status"},
		{harness.LookupConfig{URL: "http://127.0.0.1:8080/t/{{.Key}}", ResultID: "id"}, "lookup.result_id", "not a JSON pointer"},
	} {
		_, err := harness.NewHTTPTool(harness.HTTPConfig{Name: "t", URL: "http://127.0.0.1:8080/t", Body: "{{.Marker}}", Oracle: oracle, Lookup: &tc.lookup})
		var fe *harness.FieldError
		require.True(t, errors.As(err, &fe), "%s: %v", tc.reason, err)
		assert.Equal(t, tc.field, fe.Field, tc.reason)
	}
}

func TestLookupClassifiesItsAnswers(t *testing.T) {
	oracle := harness.OracleFunc(func(context.Context, string) (int, error) { return 0, nil })
	tool, err := harness.NewHTTPTool(harness.HTTPConfig{Name: "t", URL: "http://127.0.0.1:8080/t", Body: "{{.Marker}}", Oracle: oracle,
		Lookup: &harness.LookupConfig{URL: "http://127.0.0.1:8080/t/{{.Key}}", Found: []int{200, 203}, ResultID: "/id"}})
	require.NoError(t, err)
	l := harness.LookupOf(tool)
	require.NotNil(t, l)
	for _, tc := range []struct {
		outcome harness.Outcome
		status  int
		body    string
		want    harness.LookupAnswer
		id      string
		reason  string
	}{
		{harness.OK, 200, `{"id":"t-1"}`, harness.LookupFound, "t-1", "a found status, its result id read"},
		{harness.OK, 203, `{}`, harness.LookupFound, "", "every declared found status"},
		{harness.OK, 404, `{"id":"t-1"}`, harness.LookupNotFound, "", "the default not-found status"},
		{harness.OK, 500, ``, harness.LookupUnknown, "", "a status that is neither"},
		{harness.OK, 409, ``, harness.LookupUnknown, "", "in flight: neither"},
		{harness.Unknown, 0, ``, harness.LookupUnknown, "", "no answer"},
	} {
		got, id := l.Classify(tc.outcome, tc.status, []byte(tc.body))
		assert.Equal(t, tc.want, got, tc.reason)
		assert.Equal(t, tc.id, id, tc.reason)
	}
	call, err := l.Prepare(harness.Operation{ID: "op-1", Key: "k-1", Marker: "m-1", Seed: 1})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(call.Wire), "GET /t/k-1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"), "%q", call.Wire)
	assert.Equal(t, "op-1", call.Op.ID, "the lookup is recorded against its operation")

	plain, err := harness.NewHTTPTool(harness.HTTPConfig{Name: "t", URL: "http://127.0.0.1:8080/t", Body: "{{.Marker}}", Oracle: oracle})
	require.NoError(t, err)
	assert.Nil(t, harness.LookupOf(plain), "no lookup declared")
}

// TestSessionLookupCountsAroundTheAnswer: a session's lookup goes through
// the tool's proxy and records the oracle's counts before it was sent and
// after its answer arrived.
func TestSessionLookupCountsAroundTheAnswer(t *testing.T) {
	var count atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/t/found" {
			count.Add(1) // the commit lands while the lookup is answered
			_, _ = w.Write([]byte(`{"id":"t-9"}`))
			return
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	oracle := harness.OracleFunc(func(context.Context, string) (int, error) { return int(count.Load()), nil })
	tool, err := harness.NewHTTPTool(harness.HTTPConfig{Name: "t", URL: srv.URL + "/t", Body: "{{.Marker}}", Oracle: oracle,
		Lookup: &harness.LookupConfig{URL: srv.URL + "/t/{{.Key}}", ResultID: "/id"}})
	require.NoError(t, err)
	backend := faults.NewEmbedded()
	defer backend.Close(context.Background())
	s, err := harness.Open(context.Background(), backend, tool, harness.KeyUUID)
	require.NoError(t, err)
	defer s.Close(context.Background())

	a, err := s.Lookup(context.Background(), harness.Operation{ID: "op-1", Key: "found", Marker: "m"}, time.Now())
	require.NoError(t, err)
	assert.Equal(t, harness.LookupFound, a.Lookup)
	assert.Equal(t, "t-9", a.ResultID)
	assert.Equal(t, 0, a.Before, "counted before the lookup was sent")
	assert.Equal(t, 1, a.After, "counted after its answer")
	assert.Equal(t, "op-1", a.Op)

	a, err = s.Lookup(context.Background(), harness.Operation{ID: "op-2", Key: "missing", Marker: "m"}, time.Now())
	require.NoError(t, err)
	assert.Equal(t, harness.LookupNotFound, a.Lookup)
	assert.Equal(t, 404, a.Status)

	plain, err := harness.NewHTTPTool(harness.HTTPConfig{Name: "p", URL: srv.URL + "/t", Body: "{{.Marker}}", Oracle: oracle})
	require.NoError(t, err)
	ps, err := harness.Open(context.Background(), backend, plain, harness.KeyUUID)
	require.NoError(t, err)
	defer ps.Close(context.Background())
	_, err = ps.Lookup(context.Background(), harness.Operation{ID: "op-3", Key: "k", Marker: "m"}, time.Now())
	require.ErrorIs(t, err, harness.ErrNoLookup)
}
