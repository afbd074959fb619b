package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The test binary doubles as the entrypoint: with ENTRYPOINT_TEST_ROLE set
// it runs that role with its arguments (as the image would under argv[0]).
func TestMain(m *testing.M) {
	if role := os.Getenv("ENTRYPOINT_TEST_ROLE"); role != "" {
		os.Exit(dispatch(role, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runRole runs the role in a child process and returns its exit status,
// stdout and stderr.
func runRole(t *testing.T, role string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ENTRYPOINT_TEST_ROLE="+role)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return code, stdout.String(), stderr.String()
}

func TestParseCommandPostgresShapes(t *testing.T) {
	// The commands initdb 15 and pg_ctl pass to /bin/sh -c.
	cases := []struct {
		line  string
		words []string
		redir []redirect
	}{
		{`"/usr/lib/postgresql/15/bin/postgres" -V`, []string{"/usr/lib/postgresql/15/bin/postgres", "-V"}, nil},
		{
			`"/usr/lib/postgresql/15/bin/postgres" --check -F -c log_checkpoints=false  -c max_connections=100 -c shared_buffers=1000 -c dynamic_shared_memory_type=posix < "/dev/null" > "/dev/null" 2>&1`,
			[]string{"/usr/lib/postgresql/15/bin/postgres", "--check", "-F", "-c", "log_checkpoints=false", "-c", "max_connections=100", "-c", "shared_buffers=1000", "-c", "dynamic_shared_memory_type=posix"},
			[]redirect{{0, "<", "/dev/null"}, {1, ">", "/dev/null"}, {2, ">&", "1"}},
		},
		{`"/usr/lib/postgresql/15/bin/postgres" --boot -X 16777216  -F -c log_checkpoints=false  `,
			[]string{"/usr/lib/postgresql/15/bin/postgres", "--boot", "-X", "16777216", "-F", "-c", "log_checkpoints=false"}, nil},
		{`"/usr/lib/postgresql/15/bin/postgres" --single -F -O -j -c search_path=pg_catalog -c exit_on_error=true -c log_checkpoints=false  template1 >/dev/null`,
			[]string{"/usr/lib/postgresql/15/bin/postgres", "--single", "-F", "-O", "-j", "-c", "search_path=pg_catalog", "-c", "exit_on_error=true", "-c", "log_checkpoints=false", "template1"},
			[]redirect{{1, ">", "/dev/null"}}},
		{`locale -a`, []string{"locale", "-a"}, nil},
		{`exec "/usr/lib/postgresql/15/bin/postgres" -D "/var/lib/postgresql/data" -c listen_addresses='' -p 5432 < "/dev/null" >> "/tmp/log" 2>&1`,
			[]string{"/usr/lib/postgresql/15/bin/postgres", "-D", "/var/lib/postgresql/data", "-c", "listen_addresses=", "-p", "5432"},
			[]redirect{{0, "<", "/dev/null"}, {1, ">>", "/tmp/log"}, {2, ">&", "1"}}},
		{`a\ b "c \"d\" \\ e" 'f "g"'`, []string{"a b", `c "d" \ e`, `f "g"`}, nil},
	}
	for _, tc := range cases {
		cmd, err := parseCommand(tc.line)
		require.NoError(t, err, tc.line)
		assert.Equal(t, tc.words, cmd.words, tc.line)
		assert.Equal(t, tc.redir, cmd.redirects, tc.line)
	}
}

func TestParseCommandRefusesShellSyntax(t *testing.T) {
	for _, line := range []string{
		"echo a | cat", "a; b", "a && b", "a || b", "echo $HOME", "echo `id`", `echo "$x"`,
		"ls *.sql", "(cd /)", "FOO=bar cmd", "cmd &", "a\nb", "# comment", "cat ~/x", "cmd 3>/dev/null",
		`"unterminated`, "'unterminated", "cmd >", "cmd 2>&", "a\\",
		// testcontainers' internal port check
		"true && (\n cat /proc/net/tcp* | awk '{print $2}' | grep -i :18eb ||\n nc -vz -w 1 localhost 6379\n)",
	} {
		_, err := parseCommand(line)
		assert.ErrorIs(t, err, errUnsupported, "%q", line)
	}
}

func TestShellRuns(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	out := filepath.Join(dir, "out")
	require.NoError(t, os.WriteFile(in, []byte("from stdin\n"), 0o644))

	code, _, stderr := runRole(t, "sh", "-c", `exec "/bin/cat" < "`+in+`" > "`+out+`" 2>&1`)
	require.Equal(t, 0, code, stderr)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "from stdin\n", string(b))

	code, _, stderr = runRole(t, "sh", "-c", `cat "`+filepath.Join(dir, "missing")+`" >>`+out+` 2>&1`)
	assert.NotEqual(t, 0, code)
	assert.Empty(t, stderr, "2>&1 sent stderr to the file")
	b, err = os.ReadFile(out)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "from stdin\ncat: "), "appended: %q", b)

	code, stdout, _ := runRole(t, "sh", "-c", "echo 'two  words'")
	assert.Equal(t, 0, code)
	assert.Equal(t, "two  words\n", stdout)

	code, _, stderr = runRole(t, "sh", "-c", "echo a | cat")
	assert.Equal(t, exitNoShell, code)
	assert.Contains(t, stderr, "no shell")

	code, _, stderr = runRole(t, "sh", "script.sh")
	assert.Equal(t, exitNoShell, code)
	assert.Contains(t, stderr, "no shell")

	code, _, stderr = runRole(t, "sh", "-c", "no-such-command-onceproof")
	assert.Equal(t, 127, code)
	assert.Contains(t, stderr, "not found")
}

func TestDispatchUnknownName(t *testing.T) {
	code, _, stderr := runRole(t, "bash")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "postgres-entrypoint")
}

func TestRedisArgs(t *testing.T) {
	noFile := func(string) ([]byte, error) { return nil, os.ErrNotExist }
	conf := func(text string) func(string) ([]byte, error) {
		return func(string) ([]byte, error) { return []byte(text), nil }
	}
	cases := []struct {
		name string
		in   []string
		read func(string) ([]byte, error)
		want []string
	}{
		{"no args", nil, noFile, []string{"redis-server", "--protected-mode", "no"}},
		{"image CMD", []string{"redis-server"}, noFile, []string{"redis-server", "--protected-mode", "no"}},
		{"flags only (WithTLS, WithLogLevel)", []string{"--loglevel", "debug"}, noFile,
			[]string{"redis-server", "--protected-mode", "no", "--loglevel", "debug"}},
		{"config file (WithConfigFile)", []string{"/usr/local/redis.conf", "--port", "7000"}, conf("save 60 1\n"),
			[]string{"redis-server", "/usr/local/redis.conf", "--protected-mode", "no", "--port", "7000"}},
		{"config sets protected-mode", []string{"/usr/local/redis.conf"}, conf("  Protected-Mode yes\n"),
			[]string{"redis-server", "/usr/local/redis.conf"}},
		{"explicit flag", []string{"redis-server", "--protected-mode", "yes"}, noFile,
			[]string{"redis-server", "--protected-mode", "yes"}},
		{"other command", []string{"redis-cli", "ping"}, noFile, []string{"redis-cli", "ping"}},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, redisArgs(tc.in, tc.read), tc.name)
	}
}

func TestPgSettings(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

	s, err := pgSettingsFromEnv(env(map[string]string{"POSTGRES_PASSWORD": "pw"}))
	require.NoError(t, err)
	assert.Equal(t, pgSettings{pgdata: defaultPGDATA, user: "postgres", password: "pw", db: "postgres",
		hostAuth: "scram-sha-256", initdbArgs: []string{}, port: "5432", socketDir: pgSocketDir}, s)
	assert.NoError(t, s.verify())
	assert.Equal(t, []string{"-D", defaultPGDATA, "--username=postgres", "--pwfile=/pw", "--encoding=UTF8", "--locale=C",
		"--auth-local=trust", "--auth-host=scram-sha-256"}, s.initdbCommandArgs("/pw"))

	s, err = pgSettingsFromEnv(env(map[string]string{"POSTGRES_USER": "app", "POSTGRES_PASSWORD": "pw"}))
	require.NoError(t, err)
	assert.Equal(t, "app", s.db, "the database defaults to the user's name")

	pwfile := filepath.Join(t.TempDir(), "pw")
	require.NoError(t, os.WriteFile(pwfile, []byte("from-file\n"), 0o600))
	s, err = pgSettingsFromEnv(env(map[string]string{"POSTGRES_PASSWORD_FILE": pwfile, "POSTGRES_DB": "d",
		"POSTGRES_INITDB_ARGS": "--data-checksums  --locale=en_US.UTF-8 -E LATIN1", "POSTGRES_INITDB_WALDIR": "/wal"}))
	require.NoError(t, err)
	assert.Equal(t, "from-file", s.password)
	assert.Equal(t, "d", s.db)
	assert.Equal(t, []string{"-D", defaultPGDATA, "--username=postgres", "--waldir=/wal", "--auth-local=trust", "--auth-host=scram-sha-256",
		"--data-checksums", "--locale=en_US.UTF-8", "-E", "LATIN1"}, s.initdbCommandArgs(""))

	_, err = pgSettingsFromEnv(env(map[string]string{"POSTGRES_PASSWORD": "a", "POSTGRES_PASSWORD_FILE": pwfile}))
	assert.ErrorContains(t, err, "exclusive")

	s, err = pgSettingsFromEnv(env(nil))
	require.NoError(t, err)
	assert.ErrorContains(t, s.verify(), "POSTGRES_PASSWORD is empty")
	s, err = pgSettingsFromEnv(env(map[string]string{"POSTGRES_HOST_AUTH_METHOD": "trust"}))
	require.NoError(t, err)
	assert.NoError(t, s.verify())
	assert.Contains(t, s.initdbCommandArgs(""), "--auth-host=trust")
}

func TestPgWantsHelp(t *testing.T) {
	assert.True(t, pgWantsHelp([]string{"--version"}))
	assert.True(t, pgWantsHelp([]string{"-C", "data_directory"}))
	assert.False(t, pgWantsHelp([]string{"-c", "fsync=off"}))
}

func TestInitScripts(t *testing.T) {
	dir := t.TempDir()
	names, err := initScripts(filepath.Join(dir, "missing"))
	require.NoError(t, err)
	assert.Empty(t, names)

	for _, n := range []string{"b.sql", "a.sql.gz", "c.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o644))
	}
	names, err = initScripts(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "a.sql.gz"), filepath.Join(dir, "b.sql"), filepath.Join(dir, "c.txt")}, names)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "setup.sh"), nil, 0o755))
	_, err = initScripts(dir)
	assert.ErrorContains(t, err, "no shell")
}
