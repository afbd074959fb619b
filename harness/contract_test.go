package harness

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTTPToolContractCalls: the keyless and refused renderings, and the
// headers and body an answer records for the contract.
func TestHTTPToolContractCalls(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/tickets/t-1")
		w.Header().Add("Idempotent-Replayed", "true")
		w.Header().Set("X-Other", "x")
		w.WriteHeader(201)
		_, _ = w.Write([]byte(`{"id":"t-1"}`))
	}))
	defer srv.Close()
	tool, err := NewHTTPTool(HTTPConfig{Name: "t", URL: srv.URL + "/tickets", Body: `{"m":"{{.Marker}}","k":"{{.Key}}"}`,
		ErrorBody: `{"m":"{{.Marker}}","amount":"none"}`, Contract: Contract{ReplayedHeader: "Idempotent-Replayed"},
		Oracle: OracleFunc(func(context.Context, string) (int, error) { return 0, nil })})
	require.NoError(t, err)
	op := Operation{ID: "op-1", Key: "k-1", Marker: "m-1", Seed: 1}

	keyless, err := tool.PrepareKeyless(op)
	require.NoError(t, err)
	assert.NotContains(t, string(keyless.Wire), "Idempotency-Key", "no key header")
	assert.Contains(t, string(keyless.Wire), `"k":""`, "an empty {{.Key}}")
	require.True(t, tool.Refuses())
	refused, err := tool.PrepareRefused(op)
	require.NoError(t, err)
	assert.Contains(t, string(refused.Wire), "Idempotency-Key: k-1\r\n", "the same key")
	assert.Contains(t, string(refused.Wire), `"amount":"none"`)

	conn, err := net.Dial("tcp", tool.Upstream())
	require.NoError(t, err)
	defer conn.Close()
	r := tool.Send(context.Background(), conn, refused, time.Now().Add(5*time.Second))
	require.Equal(t, OK, r.Outcome, "%v", r.Err)
	assert.Equal(t, map[string]string{"Location": "/tickets/t-1", "Idempotent-Replayed": "true", "Content-Type": "text/plain; charset=utf-8"}, r.Headers,
		"only the headers the contract compares")
	assert.Equal(t, `{"id":"t-1"}`, string(r.FullBody))

	_, err = NewHTTPTool(HTTPConfig{Name: "t", URL: srv.URL, Body: `{"m":"{{.Marker}}"}`, ErrorBody: `{"m":"x"}`,
		Oracle: OracleFunc(func(context.Context, string) (int, error) { return 0, nil })})
	assert.ErrorContains(t, err, "error_body: never uses {{.Marker}}")
	noErr, err := NewHTTPTool(HTTPConfig{Name: "t", URL: srv.URL, Body: `{"m":"{{.Marker}}"}`,
		Oracle: OracleFunc(func(context.Context, string) (int, error) { return 0, nil })})
	require.NoError(t, err)
	assert.False(t, noErr.Refuses())
	_, err = noErr.PrepareRefused(op)
	assert.ErrorIs(t, err, ErrNoErrorBody)
}
