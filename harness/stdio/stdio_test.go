package stdio_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/harnesstest"
	"github.com/onceproof/onceproof/harness/mcp"
	"github.com/onceproof/onceproof/harness/stdio"
)

func TestMain(m *testing.M) {
	fixtures.ServeStdioIfAsked() // the test binary as the fixture's command
	os.Exit(m.Run())
}

// newTool is the stdio fixture's create_ticket, started through sh with a
// grandchild (a sleep) that carries tok, as servers launched by npx or a
// shell script do.
func newTool(t *testing.T, tok string, processes int) (*stdio.Tool, string) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	store := filepath.Join(t.TempDir(), "store.jsonl")
	tool, err := stdio.New(stdio.Config{Name: "t", Command: []string{"sh", "-c", `sleep "300.$1" & exec "$0" "$1"`, self, tok},
		Env: map[string]string{fixtures.EnvStdioStore: store}, Processes: processes,
		Call:   mcp.CallConfig{Tool: fixtures.StdioCreateTicket, Arguments: `{"subject":"{{.Marker}}","amount":{{.Int 1 9}}}`, KeyArgument: "idempotency_key", Timeout: 2 * time.Second},
		Oracle: harness.OracleFunc(func(_ context.Context, m string) (int, error) { return fixtures.StdioCount(store, m) })})
	require.NoError(t, err)
	return tool, store
}

// TestCloseLeavesNoProcess: closing the tool stops every server process
// and whatever it started (its process group), and a crash kills the
// group at once.
func TestCloseLeavesNoProcess(t *testing.T) {
	tok := harnesstest.Token()
	tool, _ := newTool(t, tok, 2)
	require.NoError(t, tool.Ready(context.Background(), nil))
	require.Len(t, harnesstest.ProcessesWith(tok), 4, "two servers (sh exec'd into the fixture) and their two sleeps")
	require.NoError(t, tool.Crash(context.Background()))
	gone := func() bool { return len(harnesstest.ProcessesWith(tok)) == 0 }
	require.Eventually(t, gone, 2*time.Second, 10*time.Millisecond, "a crash kills each process group: %v", harnesstest.ProcessesWith(tok))
	require.NoError(t, tool.Restart(context.Background()))
	require.Len(t, harnesstest.ProcessesWith(tok), 4)
	require.NoError(t, tool.Close())
	assert.Eventually(t, gone, 2*time.Second, 10*time.Millisecond, "no server process, nor what it started, outlives the tool: %v", harnesstest.ProcessesWith(tok))
}

// TestAttemptsGoThroughTheProxy: a call goes through the fault proxy to
// the server's stdin, a fault on the proxy is a fault on the call, and the
// reply says which process served it.
func TestAttemptsGoThroughTheProxy(t *testing.T) {
	tok := harnesstest.Token()
	tool, store := newTool(t, tok, 1)
	defer tool.Close()
	backend := faults.NewEmbedded()
	defer backend.Close(context.Background())
	s, err := harness.Open(context.Background(), backend, tool, harness.KeyUUID)
	require.NoError(t, err)
	defer s.Close(context.Background())
	_, err = s.Preflight(context.Background(), false)
	require.NoError(t, err)

	call, err := tool.Prepare(s.NewOp(7))
	require.NoError(t, err)
	lost, err := s.Do(context.Background(), call, faults.LoseResponse{Mode: faults.LoseCut}, time.Now(), harness.GiveUp{})
	require.NoError(t, err)
	assert.Equal(t, harness.Unknown, lost.Outcome, "the answer was cut on its way back")
	assert.Equal(t, 1, lost.After, "the server committed")
	assert.Equal(t, "process 1 (same)", lost.Note)

	require.NoError(t, s.Renew(context.Background()))
	retry, err := s.Do(context.Background(), call, nil, time.Now(), harness.GiveUp{})
	require.NoError(t, err)
	require.Equal(t, harness.OK, retry.Outcome, retry.Error)
	assert.Equal(t, "process 2 (new: restarted by the caller after a broken pipe)", retry.Note)
	assert.Equal(t, 1, retry.After, "the restarted server replays the stored result")
	n, err := fixtures.StdioCount(store, call.Op.Marker)
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	// A torn request tears the server's stdin: the next attempt goes to a
	// new process.
	call2, err := tool.Prepare(s.NewOp(8))
	require.NoError(t, err)
	torn, err := s.Do(context.Background(), call2, faults.TornRequest{Bytes: int64(call2.BodyStart + 10)}, time.Now(), harness.GiveUp{})
	require.NoError(t, err)
	assert.Equal(t, 0, torn.After, "a torn request has no effect")
	next, err := s.Do(context.Background(), call2, nil, time.Now(), harness.GiveUp{})
	require.NoError(t, err)
	assert.Equal(t, "process 3 (new: the last one's stdin was torn)", next.Note)
	assert.Equal(t, 1, next.After)
}

// TestWireIsWhatTheAttemptWrites: every attempt of a call writes as many
// bytes as Wire has, its params between BodyStart and BodyEnd.
func TestWireIsWhatTheAttemptWrites(t *testing.T) {
	tool, _ := newTool(t, harnesstest.Token(), 1)
	defer tool.Close()
	call, err := tool.Prepare(harness.Operation{ID: "op-1", Key: "k-1", Marker: "m-1", Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, byte('\n'), call.Wire[len(call.Wire)-1])
	params := string(call.Wire[call.BodyStart:call.BodyEnd])
	assert.Equal(t, `{"name":"create_ticket","arguments":{`, params[:len(`{"name":"create_ticket","arguments":{`)])
	assert.Equal(t, "}\n", string(call.Wire[call.BodyEnd:]), "the envelope closes after the params")
}

// TestAServerThatCannotStartSaysWhy: a command that exits at once fails
// Ready with its stderr.
func TestAServerThatCannotStartSaysWhy(t *testing.T) {
	tool, err := stdio.New(stdio.Config{Name: "t", Command: []string{"sh", "-c", "echo 'cannot open the database' >&2; exit 3"},
		Call:   mcp.CallConfig{Tool: "x", Arguments: `{"s":"{{.Marker}}"}`, KeyArgument: "k"},
		Oracle: harness.OracleFunc(func(context.Context, string) (int, error) { return 0, nil })})
	require.NoError(t, err)
	defer tool.Close()
	err = tool.Ready(context.Background(), nil)
	require.ErrorIs(t, err, harness.ErrUnreachable)
	assert.Contains(t, err.Error(), "cannot open the database")
	assert.Eventually(t, func() bool { return strings.Contains(tool.Log(), "[process 1] cannot open the database") }, 2*time.Second, 10*time.Millisecond)
}
