package harness_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/harnesstest"
)

func TestAnAttemptEndsWhenItsContextIsCancelled(t *testing.T) {
	silent := harnesstest.NewSilentListener(t)
	tool, err := harness.NewHTTPTool(harness.HTTPConfig{Name: "silent", URL: "http://" + silent.Addr().String() + "/x", Body: "{{.Marker}}",
		Timeout: time.Hour, Oracle: harnesstest.ZeroOracle()})
	require.NoError(t, err)
	backend := faults.NewEmbedded()
	defer backend.Close(context.Background())
	s, err := harness.Open(context.Background(), backend, tool, harness.KeyUUID)
	require.NoError(t, err)
	defer s.Close(context.Background())
	call, err := tool.Prepare(s.NewOp(1))
	require.NoError(t, err)

	ctx, cancelledAt := harnesstest.CancelSoon(t, silent.Accepted)
	a := s.Send(ctx, call, time.Now(), harness.GiveUp{})
	took := time.Since(cancelledAt())
	assert.Less(t, took, harnesstest.Promptly, "a 1h per-attempt timeout must not outlast the context")
	assert.Equal(t, harness.Unknown, a.Outcome, "the request was written: its fate is unknown")
	assert.Contains(t, a.Error, "abandoned")
}

func TestHTTPToolSendEndsWhenItsContextIsCancelled(t *testing.T) {
	tool, err := harness.NewHTTPTool(harness.HTTPConfig{Name: "t", URL: "http://127.0.0.1:1/x", Body: "{{.Marker}}", Oracle: harnesstest.ZeroOracle()})
	require.NoError(t, err)
	call, err := tool.Prepare(harness.Operation{ID: "o", Key: "k", Marker: "m"})
	require.NoError(t, err)
	client, server := net.Pipe()
	defer server.Close()
	go func() { _, _ = server.Read(make([]byte, len(call.Wire))) }() // read the request, never answer
	ready := make(chan struct{})
	close(ready)
	ctx, cancelledAt := harnesstest.CancelSoon(t, ready)
	r := tool.Send(ctx, client, call, time.Now().Add(time.Hour))
	assert.Less(t, time.Since(cancelledAt()), harnesstest.Promptly)
	assert.Equal(t, harness.Unknown, r.Outcome)
	assert.Error(t, r.Err)
}
