package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures/fixturetest"
)

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		args       []string
		wantStderr string
		reason     string
	}{
		{[]string{"--kind", "bogus"}, "valid kinds: correct, naive", "unknown kind names the valid ones"},
		{[]string{"--nope"}, "flag provided but not defined", "unknown flag"},
		{[]string{"--work", "soon"}, "invalid value", "bad duration"},
		{[]string{"--work", "-1ms"}, "--work must be positive", "negative duration"},
		{[]string{"extra"}, "unexpected arguments", "positional arguments"},
	}
	for _, tt := range tests {
		var stdout, stderr strings.Builder
		code := run(t.Context(), tt.args, &stdout, &stderr)
		assert.Equal(t, 2, code, tt.reason)
		assert.Contains(t, stderr.String(), tt.wantStderr, tt.reason)
		assert.Empty(t, stdout.String(), tt.reason)
	}
}

func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--kind", "naive", "--listen", "127.0.0.1:0", "--work", "1ms"}, pw, io.Discard)
		pw.Close()
	}()

	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	require.True(t, ok, "stdout line %q", line)

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Post(url+"/tickets", "application/json", strings.NewReader(`{"subject":"cli-A","amount":1}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode)

	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancellation")
	}
}

// buildBinary builds the command with CGO_ENABLED=0 into a temporary
// directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "onceproof-fixture")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

func TestBinarySignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "--kind", "check-then-act", "--listen", "127.0.0.1:0")
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			line, err := bufio.NewReader(stdout).ReadString('\n')
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(line, "listening on http://127.0.0.1:"), line)

			require.NoError(t, cmd.Process.Signal(sig))
			waitErr := make(chan error, 1)
			go func() { waitErr <- cmd.Wait() }()
			select {
			case err := <-waitErr:
				assert.NoError(t, err, "clean exit on %v", sig)
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("no exit after %v", sig)
			}
		})
	}

	cmd := exec.Command(bin, "--kind", "bogus")
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
	assert.Equal(t, 2, exitErr.ExitCode())
	assert.Contains(t, string(out), "unknown fixture kind")
}

// envMap is a getenv over a fixed environment.
func envMap(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

func TestRunStoreUsageErrors(t *testing.T) {
	tests := []struct {
		args       []string
		env        map[string]string
		wantStderr string
		reason     string
	}{
		{[]string{"--kind", "correct-postgres"}, nil, "needs a PostgreSQL DSN: pass --postgres or set DATABASE_URL", "no DSN"},
		{[]string{"--kind", "memory-dedupe"}, map[string]string{"REDIS_URL": "redis://127.0.0.1:1/0"}, "needs a PostgreSQL DSN", "a Redis URL is not a DSN"},
		{[]string{"--kind", "check-then-act-postgres", "--redis", "redis://127.0.0.1:1/0"}, nil, "needs a PostgreSQL DSN", "a Redis URL is not a DSN"},
		{[]string{"--kind", "correct-redis"}, map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/x"}, "needs a Redis URL: pass --redis or set REDIS_URL", "no Redis URL"},
		{nil, map[string]string{"ONCEPROOF_FIXTURE_KIND": "correct-redis"}, "needs a Redis URL", "kind from the environment"},
		{nil, map[string]string{"ONCEPROOF_FIXTURE_KIND": "bogus"}, `unknown fixture kind "bogus"`, "a bad kind from the environment"},
		{[]string{"--kind", "bogus"}, map[string]string{"ONCEPROOF_FIXTURE_KIND": "naive"}, `unknown fixture kind "bogus"`, "the flag wins over the environment"},
		{[]string{"--kind", "correct-postgres", "--postgres", "postgres://127.0.0.1:notaport/x"}, nil, "parsing the PostgreSQL DSN", "unparsable DSN"},
		{[]string{"--kind", "correct-redis", "--redis", "http://127.0.0.1:6379"}, nil, "parsing the Redis URL", "unparsable URL"},
		{[]string{"--kind", "correct-redis", "--redis", "redis://127.0.0.1:1/0", "--connect-timeout", "0s"}, nil, "--connect-timeout must be positive", "zero timeout"},
	}
	for _, tt := range tests {
		var stdout, stderr strings.Builder
		code := runEnv(t.Context(), tt.args, envMap(tt.env), &stdout, &stderr)
		assert.Equal(t, 2, code, tt.reason)
		assert.Contains(t, stderr.String(), tt.wantStderr, tt.reason)
		assert.Empty(t, stdout.String(), tt.reason)
	}
}

func TestRunStoreUnreachable(t *testing.T) {
	closed := closedAddr(t)
	tests := []struct {
		args       []string
		env        map[string]string
		wantStderr string
		reason     string
	}{
		{[]string{"--kind", "correct-redis", "--listen", "127.0.0.1:0", "--connect-timeout", "300ms"},
			map[string]string{"REDIS_URL": "redis://" + closed + "/0"}, "waiting for Redis at " + closed, "nothing listens"},
		{[]string{"--kind", "memory-dedupe", "--listen", "127.0.0.1:0", "--connect-timeout", "300ms", "--postgres", "postgres://postgres@" + closed + "/x?sslmode=disable"},
			nil, "waiting for PostgreSQL at " + closed, "nothing listens"},
	}
	for _, tt := range tests {
		var stdout, stderr strings.Builder
		code := runEnv(t.Context(), tt.args, envMap(tt.env), &stdout, &stderr)
		assert.Equal(t, 1, code, tt.reason)
		assert.Contains(t, stderr.String(), tt.wantStderr, tt.reason)
		assert.Contains(t, stderr.String(), "not ready within 300ms", tt.reason)
		assert.Empty(t, stdout.String(), "never announces listening: %s", tt.reason)
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// startRun runs runEnv in the background and returns the announced URL, a
// cancel func and the exit status channel.
func startRun(t *testing.T, args []string, env map[string]string, stderr io.Writer) (string, context.CancelFunc, <-chan int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- runEnv(ctx, args, envMap(env), pw, stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	require.True(t, ok, "stdout line %q", line)
	return url, cancel, done
}

// waitExit waits for the exit status of a run.
func waitExit(t *testing.T, done <-chan int) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after cancellation")
		return -1
	}
}

func TestRunEnvFallbacks(t *testing.T) {
	url, cancel, done := startRun(t, nil, map[string]string{
		"ONCEPROOF_FIXTURE_KIND":   "naive",
		"ONCEPROOF_FIXTURE_LISTEN": "127.0.0.1:0",
		"DATABASE_URL":             "postgres://ignored.invalid/x",
	}, io.Discard)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Post(url+"/tickets", "application/json", strings.NewReader(`{"subject":"env-A","amount":1}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode, "naive needs no key: the kind came from the environment")
	cancel()
	assert.Equal(t, 0, waitExit(t, done))
}

// startPostgres starts a private PostgreSQL server for the test, skipping
// the test when PostgreSQL is not installed.
func startPostgres(t *testing.T) *fixturetest.Postgres {
	t.Helper()
	pg, err := fixturetest.StartPostgres(t.Context())
	if errors.Is(err, fixturetest.ErrNotInstalled) {
		t.Skipf("needs PostgreSQL 15: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, pg.Close()) })
	return pg
}

// startRedis starts a private Redis server for the test, skipping the test
// when Redis is not installed.
func startRedis(t *testing.T) *fixturetest.Redis {
	t.Helper()
	r, err := fixturetest.StartRedis(t.Context())
	if errors.Is(err, fixturetest.ErrNotInstalled) {
		t.Skipf("needs Redis 7: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, r.Close()) })
	return r
}

// postTicket posts body with key and returns the status and body.
func postTicket(t *testing.T, client *http.Client, url, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/tickets", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Idempotency-Key", key)
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(data)
}

func TestRunStoreKinds(t *testing.T) {
	pg := startPostgres(t)
	rd := startRedis(t)
	newDSN := func() string {
		dsn, err := pg.CreateDatabase(t.Context())
		require.NoError(t, err)
		return dsn
	}
	newRedis := func() string {
		u, err := rd.NewDatabase()
		require.NoError(t, err)
		return u
	}
	tests := []struct {
		kind   string
		args   []string
		env    map[string]string
		reason string
	}{
		{"correct-postgres", []string{"--postgres", newDSN()}, nil, "DSN from the flag"},
		{"memory-dedupe", nil, map[string]string{"DATABASE_URL": newDSN()}, "DSN from DATABASE_URL"},
		{"check-then-act-postgres", []string{"--postgres", newDSN()}, map[string]string{"DATABASE_URL": "postgres://wrong.invalid/x"}, "the flag wins over DATABASE_URL"},
		{"correct-redis", nil, map[string]string{"REDIS_URL": newRedis()}, "URL from REDIS_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			args := append([]string{"--kind", tt.kind, "--listen", "127.0.0.1:0", "--work", "1ms"}, tt.args...)
			url, cancel, done := startRun(t, args, tt.env, io.Discard)
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			body := `{"subject":"cli-store-A","amount":4}`
			s1, b1 := postTicket(t, client, url, "key-1", body)
			s2, b2 := postTicket(t, client, url, "key-1", body)
			assert.Equal(t, http.StatusCreated, s1, b1)
			assert.Equal(t, http.StatusCreated, s2, b2)
			assert.JSONEq(t, `{"id":"t-1","subject":"cli-store-A","amount":4}`, b1, tt.reason)
			assert.Equal(t, b1, b2, "replayed")
			cancel()
			assert.Equal(t, 0, waitExit(t, done))
		})
	}
}

// lateProxy forwards TCP connections to target, but until open is called it
// refuses them (accepts and closes at once), like a database container that
// is not up yet.
type lateProxy struct {
	ln     net.Listener
	target string
	opened chan struct{}
}

func newLateProxy(t *testing.T, target string) *lateProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &lateProxy{ln: ln, target: target, opened: make(chan struct{})}
	var conns sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		conns.Wait()
	})
	conns.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case <-p.opened:
			default:
				c.Close()
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			conns.Go(func() { _, _ = io.Copy(up, c); up.Close() })
			conns.Go(func() { _, _ = io.Copy(c, up); c.Close() })
		}
	})
	return p
}

func (p *lateProxy) addr() string { return p.ln.Addr().String() }
func (p *lateProxy) open()        { close(p.opened) }

func TestRunWaitsForLateDatabase(t *testing.T) {
	pg := startPostgres(t)
	dsn, err := pg.CreateDatabase(t.Context())
	require.NoError(t, err)
	proxy := newLateProxy(t, pg.Addr())
	lateDSN := strings.Replace(dsn, pg.Addr(), proxy.addr(), 1)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stderr lockedBuffer
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- runEnv(ctx, []string{"--kind", "correct-postgres", "--listen", "127.0.0.1:0"}, envMap(map[string]string{"DATABASE_URL": lateDSN}), pw, &stderr)
		pw.Close()
	}()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(pr).ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, pr)
	}()

	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "waiting for PostgreSQL at "+proxy.addr()) }, 10*time.Second, 10*time.Millisecond,
		"a clear log line while the database is not up")
	select {
	case line := <-lines:
		t.Fatalf("announced %q before the database was up", line)
	case <-time.After(300 * time.Millisecond):
	}
	proxy.open()
	var line string
	select {
	case line = <-lines:
	case <-time.After(30 * time.Second):
		t.Fatal("never announced listening")
	}
	require.True(t, strings.HasPrefix(line, "listening on http://127.0.0.1:"), line)

	conn, err := pgx.Connect(t.Context(), dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var tables int
	require.NoError(t, conn.QueryRow(t.Context(),
		"select count(*) from information_schema.tables where table_name in ('tickets', 'idempotency_keys')").Scan(&tables))
	assert.Equal(t, 2, tables, "the schema exists once listening is announced")

	cancel()
	assert.Equal(t, 0, waitExit(t, done))
}

// lockedBuffer is a strings.Builder safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestBinaryStoreKind(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	pg := startPostgres(t)
	dsn, err := pg.CreateDatabase(t.Context())
	require.NoError(t, err)
	bin := buildBinary(t)

	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"ONCEPROOF_FIXTURE_KIND=correct-postgres", "ONCEPROOF_FIXTURE_LISTEN=127.0.0.1:0", "DATABASE_URL="+dsn)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	require.True(t, ok, line)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	status, body := postTicket(t, client, url, "key-1", `{"subject":"bin-A","amount":1}`)
	assert.Equal(t, http.StatusCreated, status, body)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case err := <-waitErr:
		assert.NoError(t, err, "clean exit on SIGTERM")
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("no exit after SIGTERM")
	}

	tests := []struct {
		env      []string
		wantCode int
		wantOut  string
		reason   string
	}{
		{[]string{"ONCEPROOF_FIXTURE_KIND=correct-redis", "REDIS_URL="}, 2, "needs a Redis URL", "missing URL"},
		{[]string{"ONCEPROOF_FIXTURE_KIND=correct-redis", "REDIS_URL=redis://" + closedAddr(t) + "/0"}, 1, "not ready within 200ms", "unreachable store"},
	}
	for _, tt := range tests {
		cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--connect-timeout", "200ms")
		cmd.Env = append(os.Environ(), tt.env...)
		out, err := cmd.CombinedOutput()
		var exitErr *exec.ExitError
		require.ErrorAs(t, err, &exitErr, tt.reason)
		assert.Equal(t, tt.wantCode, exitErr.ExitCode(), tt.reason)
		assert.Contains(t, string(out), tt.wantOut, tt.reason)
	}
}
