package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/report"
)

func TestKeysAreStableAndCarryNoData(t *testing.T) {
	ops := NewOps(KeyUUID)
	a, b := ops.Next(1), ops.Next(1)
	require.NotEqual(t, a.ID, b.ID, "operations are distinct")
	require.NotEqual(t, a.Key, b.Key, "distinct operations get distinct keys")
	require.Equal(t, a.Key, KeyUUID.Key(a.ID), "the key is a function of the operation id")
	require.Len(t, a.Key, 36)
	require.Len(t, KeyHex.Key(a.ID), 32)
	require.NotContains(t, a.Key, a.ID, "the key does not spell the operation")
	require.NotContains(t, a.Marker, b.Marker, "no marker is a substring of another")

	changed := a.WithPayload(2, ops.Marker())
	require.Equal(t, a.Key, changed.Key, "a changed payload keeps the key")
	require.NotEqual(t, a.Marker, changed.Marker)

	for _, tc := range []struct {
		in      string
		want    KeyFormat
		wantErr bool
		reason  string
	}{
		{"", KeyUUID, false, "default"},
		{"uuid", KeyUUID, false, "explicit"},
		{"hex", KeyHex, false, "hex"},
		{"email", "", true, "unknown"},
	} {
		got, err := ParseKeyFormat(tc.in)
		require.Equal(t, tc.wantErr, err != nil, tc.reason)
		require.Equal(t, tc.want, got, tc.reason)
	}
}

func TestTemplateRendersTheSameBytesPerOperation(t *testing.T) {
	tpl := MustTemplate(`{"m":"{{.Marker}}","k":"{{.Key}}","op":"{{.Op}}","n":{{.Int 1 1000000}},"c":"{{.Pick "a" "b" "c" "d"}}"}`)
	op := Operation{ID: "op-1", Key: "k-1", Marker: "m-1", Seed: 7}
	first, err := tpl.Render(op)
	require.NoError(t, err)
	for range 10 {
		again, err := tpl.Render(op)
		require.NoError(t, err)
		require.Equal(t, first, again, "a retry renders the same payload")
	}
	other, err := tpl.Render(op.WithPayload(8, "m-2"))
	require.NoError(t, err)
	require.NotEqual(t, first, other)

	for _, tc := range []struct{ src, reason string }{
		{`{{.Int 5 1}}`, "hi below lo"},
		{`{{.Pick}}`, "no choices"},
		{`{{.Nope}}`, "unknown field"},
	} {
		tpl, err := ParseTemplate("t", tc.src)
		require.NoError(t, err, tc.reason)
		_, err = tpl.Render(op)
		require.Error(t, err, tc.reason)
	}
}

func TestPointer(t *testing.T) {
	var doc any
	require.NoError(t, json.Unmarshal([]byte(`{"a":{"b/c":[10,{"d~e":"x"}]},"n":3}`), &doc))
	for _, tc := range []struct {
		ptr     string
		want    any
		wantErr bool
		reason  string
	}{
		{"", doc, false, "whole document"},
		{"/n", 3.0, false, "member"},
		{"/a/b~1c/0", 10.0, false, "escaped slash and index"},
		{"/a/b~1c/1/d~0e", "x", false, "escaped tilde"},
		{"/a/missing", nil, true, "no such member"},
		{"/a/b~1c/9", nil, true, "index out of range"},
		{"/n/x", nil, true, "inside a number"},
	} {
		p, err := ParsePointer(tc.ptr)
		require.NoError(t, err, tc.reason)
		got, err := p.Lookup(doc)
		require.Equal(t, tc.wantErr, err != nil, tc.reason)
		if !tc.wantErr {
			require.Equal(t, tc.want, got, tc.reason)
		}
	}
	for _, bad := range []string{"n", "/a~2"} {
		_, err := ParsePointer(bad)
		require.Error(t, err, bad)
	}
}

func TestHTTPOracle(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/count":
			fmt.Fprintf(w, `{"count": %d}`, len(r.URL.Query().Get("marker")))
		case "/list":
			fmt.Fprint(w, `{"items": [1, 2, 3]}`)
		case "/neg":
			fmt.Fprint(w, `{"count": -1}`)
		case "/frac":
			fmt.Fprint(w, `{"count": 1.5}`)
		case "/text":
			fmt.Fprint(w, `three`)
		default:
			http.Error(w, "no", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		url, ptr string
		want     int
		wantErr  string
		reason   string
	}{
		{"/count?marker={{.Marker}}", "/count", 4, "", "a number at the pointer"},
		{"/list", "/items", 3, "", "an array's length"},
		{"/neg", "/count", 0, "non-negative", "negative count"},
		{"/frac", "/count", 0, "non-negative integer", "fractional count"},
		{"/text", "/count", 0, "not JSON", "not JSON"},
		{"/boom", "/count", 0, "status 500", "server error"},
		{"/list", "/missing", 0, "no member", "pointer misses"},
	} {
		o, err := NewHTTPOracle(srv.URL+tc.url, tc.ptr)
		require.NoError(t, err, tc.reason)
		n, err := o.Count(ctx, "abcd")
		if tc.wantErr != "" {
			require.ErrorIs(t, err, ErrOracle, tc.reason)
			require.ErrorContains(t, err, tc.wantErr, tc.reason)
			continue
		}
		require.NoError(t, err, tc.reason)
		require.Equal(t, tc.want, n, tc.reason)
	}
}

func TestCommandOracle(t *testing.T) {
	ctx := context.Background()
	o := &CommandOracle{Argv: []string{"sh", "-c", `printf '%s\n' "${#ONCEPROOF_MARKER}"`}}
	n, err := o.Count(ctx, "marker")
	require.NoError(t, err)
	require.Equal(t, 6, n, "the marker reaches the command")

	for _, tc := range []struct{ script, reason string }{
		{"echo lots", "not an integer"},
		{"echo -3", "negative"},
		{"exit 3", "exit status"},
	} {
		_, err := (&CommandOracle{Argv: []string{"sh", "-c", tc.script}}).Count(ctx, "m")
		require.ErrorIs(t, err, ErrOracle, tc.reason)
	}
}

func TestSettledWaitsForAStableCount(t *testing.T) {
	var calls atomic.Int64
	moving := OracleFunc(func(context.Context, string) (int, error) {
		return int(min(calls.Add(1), 3)), nil // 1, 2, 3, 3, ...
	})
	n, err := Settled(moving, time.Millisecond).Count(context.Background(), "m")
	require.NoError(t, err)
	require.Equal(t, 3, n)

	var forever atomic.Int64
	never := OracleFunc(func(context.Context, string) (int, error) { return int(forever.Add(1)), nil })
	_, err = Settled(never, time.Millisecond).Count(context.Background(), "m")
	require.ErrorIs(t, err, ErrOracle)
	require.ErrorContains(t, err, "still moving")

	_, unwrapped := Settled(moving, 0).(OracleFunc)
	require.True(t, unwrapped, "no settle, no wrapper")
}

func TestNewHTTPToolRefusesBlindConfigs(t *testing.T) {
	oracle, err := NewHTTPOracle("http://127.0.0.1:1/count?m={{.Marker}}", "/count")
	require.NoError(t, err)
	empty := ""
	for _, tc := range []struct {
		cfg     HTTPConfig
		wantErr string
		reason  string
	}{
		{HTTPConfig{Name: "t", URL: "http://127.0.0.1:1/x", Body: `{"a":1}`, Oracle: oracle}, "never uses {{.Marker}}", "without a marker the oracle cannot attribute effects"},
		{HTTPConfig{Name: "t", URL: "http://127.0.0.1:1/x", Body: `{{.Marker}}`}, "no oracle", "no oracle"},
		{HTTPConfig{Name: "t", URL: "http://127.0.0.1:1/x", Body: `{{.Marker}}`, KeyHeader: &empty, Oracle: oracle}, "never uses {{.Key}}", "the key must travel somewhere"},
		{HTTPConfig{Name: "t", URL: "127.0.0.1:1/x", Body: `{{.Marker}}`, Oracle: oracle}, "url", "no scheme"},
		{HTTPConfig{Name: "t", URL: "http://127.0.0.1:1/x", Body: `{{.Marker`, Oracle: oracle}, "body", "bad template"},
		{HTTPConfig{Name: "t", URL: "http://127.0.0.1:1/x", Body: `{{.Marker}}`, ResultID: "id", Oracle: oracle}, "result_id", "bad pointer"},
	} {
		_, err := NewHTTPTool(tc.cfg)
		require.ErrorContains(t, err, tc.wantErr, tc.reason)
	}
}

func TestPrepareWritesOneOwnedRequest(t *testing.T) {
	oracle, err := NewHTTPOracle("http://127.0.0.1:1/count?m={{.Marker}}", "/count")
	require.NoError(t, err)
	tool, err := NewHTTPTool(HTTPConfig{Name: "t", URL: "http://127.0.0.1:1/tickets?x=1",
		Headers: map[string]string{"content-type": "application/json", "X-Op": "{{.Op}}"},
		Body:    `{"s":"{{.Marker}}"}`, Oracle: oracle})
	require.NoError(t, err)
	call, err := tool.Prepare(Operation{ID: "op-1", Key: "k-1", Marker: "m-1"})
	require.NoError(t, err)
	wire := string(call.Wire)
	require.True(t, strings.HasPrefix(wire, "POST /tickets?x=1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n"), wire)
	require.Contains(t, wire, "Content-Type: application/json\r\n")
	require.Contains(t, wire, "X-Op: op-1\r\n")
	require.Contains(t, wire, "Idempotency-Key: k-1\r\n")
	require.Equal(t, `{"s":"m-1"}`, wire[call.BodyStart:])
	require.Equal(t, "127.0.0.1:1", tool.Upstream())
}

func TestTemplatesMayNotPrintTheirDataWhole(t *testing.T) {
	for _, tc := range []struct {
		src     string
		refused bool
		reason  string
	}{
		{`{{.}}`, true, "the dot prints a pointer: no stable bytes"},
		{`{{$}}`, true, "so does $"},
		{`{{printf "%v" .}}`, true, "as an argument too"},
		{`{{if .Marker}}{{$}}{{end}}`, true, "inside a branch"},
		{`{{$.Marker}} {{.Key}}`, false, "fields of the data are fine"},
		{`{{$n := .Int 1 5}}{{$n}}{{$n}}`, false, "a variable holding a drawn value is fine"},
	} {
		tpl, err := ParseTemplate("t", tc.src)
		if tc.refused {
			require.ErrorContains(t, err, "uses the template's data as a whole", tc.reason)
			continue
		}
		require.NoError(t, err, tc.reason)
		op := Operation{ID: "o", Key: "k", Marker: "m", Seed: 9}
		a, err := tpl.Render(op)
		require.NoError(t, err, tc.reason)
		b, _ := tpl.Render(op)
		require.Equal(t, a, b, "the same operation renders the same bytes")
	}
}

func TestFailureOfReadsTheErrorsType(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, refused := net.Dial("tcp", addr)
	require.Error(t, refused)
	for _, tc := range []struct {
		err    error
		want   report.Failure
		reason string
	}{
		{refused, report.FailureRefused, "a dial to a closed port"},
		{fmt.Errorf("read response: %w", io.ErrUnexpectedEOF), report.FailureEOF, "a connection closed mid-answer"},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), report.FailureReset, "a reset"},
		{fmt.Errorf("read: %w", os.ErrDeadlineExceeded), report.FailureTimeout, "a deadline"},
		{errors.New("dial tcp: connection refused"), report.FailureOther, "text that only says so is not classified"},
		{nil, "", "no error"},
	} {
		assert.Equal(t, tc.want, failureOf(tc.err), tc.reason)
	}
}
