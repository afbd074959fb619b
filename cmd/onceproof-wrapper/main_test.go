package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	var status atomic.Int32
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	env := func(url, op string) func(string) string {
		return func(k string) string {
			return map[string]string{"ONCEPROOF_URL": url, "ONCEPROOF_OP": op}[k]
		}
	}
	for _, tc := range []struct {
		args   []string
		env    func(string) string
		status int
		code   int
		hits   int32
		stderr string
		reason string
	}{
		{[]string{"--wrapper", "good"}, env(srv.URL, "1"), 201, exitOK, 1, "", "success exits 0"},
		{[]string{"--wrapper", "good"}, env(srv.URL, "2"), 422, exitError, 1, "op 2", "a final 4xx exits 1 after one attempt"},
		{[]string{"--wrapper", "retry-everything"}, env(srv.URL, "3"), 422, exitError, 8, "retry-everything", "the buggy wrapper retries the 4xx"},
		{[]string{"--wrapper", "good", "--policy", "default"}, env(srv.URL, "1"), 201, exitOK, 1, "", "the default policy"},
		{[]string{"--wrapper", "nope"}, env(srv.URL, "1"), 201, exitUsage, 0, "unknown wrapper", "bad wrapper"},
		{[]string{}, env(srv.URL, "1"), 201, exitUsage, 0, "--wrapper", "no wrapper"},
		{[]string{"--wrapper", "good", "--policy", "slow"}, env(srv.URL, "1"), 201, exitUsage, 0, "--policy", "bad policy"},
		{[]string{"--wrapper", "good"}, env("", "1"), 201, exitUsage, 0, "ONCEPROOF_URL", "no URL"},
		{[]string{"--wrapper", "good"}, env(srv.URL, "x"), 201, exitUsage, 0, "ONCEPROOF_OP", "bad op number"},
		{[]string{"--wrapper", "good", "extra"}, env(srv.URL, "1"), 201, exitUsage, 0, "unexpected argument", "stray argument"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			status.Store(int32(tc.status))
			hits.Store(0)
			var stderr bytes.Buffer
			code := run(context.Background(), tc.args, tc.env, &stderr)
			require.Equal(t, tc.code, code, "%s: %s", tc.reason, stderr.String())
			require.Equal(t, tc.hits, hits.Load(), tc.reason)
			require.Contains(t, stderr.String(), tc.stderr, tc.reason)
		})
	}
}
