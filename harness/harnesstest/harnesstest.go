package harnesstest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness"
)

// Promptly is how soon a cancelled wait must end, whatever the timeouts.
const Promptly = time.Second

// SilentListener accepts connections on loopback and never answers on
// them; each accepted connection is signalled on Accepted.
type SilentListener struct {
	net.Listener
	// Accepted receives a value per accepted connection.
	Accepted chan struct{}
	mu       sync.Mutex
	conns    []net.Conn
	done     sync.WaitGroup
}

// NewSilentListener starts a SilentListener, closed with its connections
// when t ends.
func NewSilentListener(t testing.TB) *SilentListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &SilentListener{Listener: ln, Accepted: make(chan struct{}, 64)}
	s.done.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.Accepted <- struct{}{}
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		s.done.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.conns {
			_ = c.Close()
		}
	})
	return s
}

// CancelSoon returns a context cancelled shortly after wait signals (or
// after 5s), and a func returning when it was cancelled.
func CancelSoon(t testing.TB, wait <-chan struct{}) (context.Context, func() time.Time) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var at time.Time
	var mu sync.Mutex
	go func() {
		select {
		case <-wait:
		case <-time.After(5 * time.Second):
		}
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		at = time.Now()
		mu.Unlock()
		cancel()
	}()
	return ctx, func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
}

// ZeroOracle counts no effect, ever.
func ZeroOracle() harness.Oracle {
	return harness.OracleFunc(func(context.Context, string) (int, error) { return 0, nil })
}

// ProcessesWith lists the processes (but this one) whose command line
// contains s: what a test looks for to prove none was left behind.
func ProcessesWith(s string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Token is a string of digits only the caller's processes carry in their
// command lines (a sleep's fraction of a second included).
func Token() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatUint(uint64(binary.BigEndian.Uint32(b[:])), 10) + "7"
}
