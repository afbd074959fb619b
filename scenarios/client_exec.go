package scenarios

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ExecClientOp returns a ClientOp that performs an operation by running
// command with "sh -c": its environment has ONCEPROOF_URL (the base URL,
// through the fault proxy) and ONCEPROOF_OP (the payload number n), and its
// exit status is its verdict (0: success). The command's standard output is
// discarded; the end of its standard error (2 KiB) is kept in the
// operation's error. On Unix the command runs in its own process group, which is killed
// when the command exits or the operation is cancelled, so nothing it
// started outlives the operation.
func ExecClientOp(command string) ClientOp {
	return func(ctx context.Context, baseURL string, n int) error {
		cmd := exec.CommandContext(ctx, "sh", "-c", command)
		cmd.Env = append(os.Environ(), "ONCEPROOF_URL="+baseURL, "ONCEPROOF_OP="+strconv.Itoa(n))
		// Standard error goes to a file, not a pipe: a background child
		// holding a pipe open would keep Wait waiting after the command
		// exited.
		stderr, err := os.CreateTemp("", "onceproof-exec-*.stderr")
		if err != nil {
			return fmt.Errorf("onceproof: %w", err)
		}
		defer os.Remove(stderr.Name())
		defer stderr.Close()
		cmd.Stderr = stderr
		cmd.WaitDelay = time.Second
		ownProcessGroup(cmd)
		err = cmd.Run()
		killProcessGroup(cmd)
		if err != nil {
			if tail := strings.TrimSpace(fileTail(stderr, 2048)); tail != "" {
				return fmt.Errorf("%w: %s", err, tail)
			}
			return err
		}
		return nil
	}
}

// fileTail returns the last n bytes of f.
func fileTail(f *os.File, n int64) string {
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-n, 0)
	buf := make([]byte, fi.Size()-off)
	got, _ := f.ReadAt(buf, off)
	return string(buf[:got])
}
