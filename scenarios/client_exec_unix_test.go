//go:build unix

package scenarios_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/scenarios"
)

func TestExecClientOpKillsItsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range []struct {
		command string
		cancel  bool
		reason  string
	}{
		{"sleep 30 & echo $! > PIDFILE; exit 0", false, "a background child dies when the command exits"},
		{"sleep 30 & echo $! > PIDFILE; wait", true, "cancelling the operation kills the command and its children"},
	} {
		pidFile := filepath.Join(dir, strconv.Itoa(i))
		command := strings.ReplaceAll(tc.command, "PIDFILE", pidFile)
		ctx, cancel := context.WithCancel(context.Background())
		if tc.cancel {
			time.AfterFunc(200*time.Millisecond, cancel)
		}
		start := time.Now()
		err := scenarios.ExecClientOp(command)(ctx, "http://127.0.0.1:1", 1)
		cancel()
		require.Less(t, time.Since(start), 5*time.Second, tc.reason)
		require.Equal(t, tc.cancel, err != nil, tc.reason)
		data, rerr := os.ReadFile(pidFile)
		require.NoError(t, rerr, tc.reason)
		pid, perr := strconv.Atoi(strings.TrimSpace(string(data)))
		require.NoError(t, perr, tc.reason)
		require.Eventually(t, func() bool { return !processAlive(pid) }, 5*time.Second, 10*time.Millisecond, tc.reason)
	}
}

// processAlive reports whether pid runs (a zombie that no one reaped yet
// does not).
func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no procfs: trust kill
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}
