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

// ticketServer is a correct enough tool for a preflight call: POST /tickets
// records the body and answers 201 {"id": ...}; GET /count?marker= counts
// the bodies holding the marker; GET /text answers something not JSON.
func ticketServer(t *testing.T) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/tickets":
			b, _ := io.ReadAll(r.Body)
			bodies = append(bodies, string(b))
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"id":"t-%d"}`, len(bodies))
		case "/count":
			n := 0
			for _, b := range bodies {
				if strings.Contains(b, r.URL.Query().Get("marker")) {
					n++
				}
			}
			fmt.Fprintf(w, `{"count":%d}`, n)
		case "/text":
			fmt.Fprint(w, "zero")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func preflight(t *testing.T, c HTTPConfig) error {
	return preflightAs(t, c, false)
}

func preflightAs(t *testing.T, c HTTPConfig, readOnly bool) error {
	t.Helper()
	c.Name, c.Body, c.Timeout = "t", `{"m":"{{.Marker}}"}`, 2*time.Second
	tool, err := NewHTTPTool(c)
	require.NoError(t, err)
	backend := faults.NewEmbedded()
	defer backend.Close(context.Background())
	s, err := Open(context.Background(), backend, tool, KeyUUID)
	require.NoError(t, err)
	defer s.Close(context.Background())
	_, err = s.Preflight(context.Background(), readOnly)
	return err
}

func TestPreflightFindsWhatWouldPassSilently(t *testing.T) {
	srv := ticketServer(t)
	count := func(url, pointer string) Oracle {
		o, err := NewHTTPOracle(url, pointer)
		require.NoError(t, err)
		return o
	}
	good := count(srv.URL+"/count?marker={{.Marker}}", "/count")
	for _, tc := range []struct {
		reason   string
		resultID string
		oracle   Oracle
		// field is the FieldError's field ("" for none); is the sentinels
		// the error wraps; unreachable whether it says unreachable.
		field       string
		is          []error
		unreachable bool
	}{
		{reason: "a result_id that finds the id passes", resultID: "/id", oracle: good},
		{reason: "no result_id passes", oracle: good},
		{reason: "a result_id that never matches is found, not passed", resultID: "/nope", oracle: good,
			field: "result_id", is: []error{ErrResultID}},
		{reason: "a result_id naming a member inside a string never matches", resultID: "/id/x", oracle: good,
			field: "result_id", is: []error{ErrResultID}},
		{reason: "a count pointer that matches nothing is a wrong shape, not unreachable", oracle: count(srv.URL+"/count?marker={{.Marker}}", "/nope"),
			field: "oracle.http.count", is: []error{ErrOracleShape, ErrOracle}},
		{reason: "a count that is not a number is a wrong shape", oracle: count(srv.URL+"/count?x={{.Marker}}", ""),
			field: "oracle.http.count", is: []error{ErrOracleShape}},
		{reason: "an answer that is not JSON is a wrong shape", oracle: count(srv.URL+"/text?m={{.Marker}}", "/count"),
			field: "oracle.http.url", is: []error{ErrOracleShape}},
		{reason: "a command printing a word is a wrong shape", oracle: &CommandOracle{Argv: []string{"echo", "none"}},
			field: "oracle.command", is: []error{ErrOracleShape}},
		{reason: "an oracle nobody answers for is unreachable", oracle: count("http://127.0.0.1:1/count?m={{.Marker}}", "/count"),
			unreachable: true},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			err := preflight(t, HTTPConfig{URL: srv.URL + "/tickets", ResultID: tc.resultID, Oracle: tc.oracle})
			if tc.field == "" && !tc.unreachable {
				require.NoError(t, err, tc.reason)
				return
			}
			require.ErrorIs(t, err, ErrPreflight, tc.reason)
			assert.Equal(t, tc.unreachable, errors.Is(err, ErrUnreachable), "unreachable? %v", err)
			for _, want := range tc.is {
				assert.ErrorIs(t, err, want)
			}
			var fe *FieldError
			if tc.field == "" {
				assert.False(t, errors.As(err, &fe), "%v", err)
				return
			}
			require.ErrorAs(t, err, &fe, "%v", err)
			assert.Equal(t, tc.field, fe.Field)
		})
	}
}

func TestPreflightOfAReadOnlyToolIgnoresItsResultID(t *testing.T) {
	srv := ticketServer(t)
	o, err := NewHTTPOracle(srv.URL+"/count?marker={{.Marker}}", "/count")
	require.NoError(t, err)
	// Its verdict (annotations only) compares no results.
	require.NoError(t, preflightAs(t, HTTPConfig{URL: srv.URL + "/tickets", ResultID: "/nope", Oracle: o}, true))
}
