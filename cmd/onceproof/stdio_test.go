package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
	"github.com/onceproof/onceproof/harness/harnesstest"
	"github.com/onceproof/onceproof/harness/spec"
)

// stdioSpec is a spec of stdio fixture tools served by this test binary
// (see TestMain) over one store, counted by the binary too; tools are
// entries of name, tool, arguments.
func stdioSpec(t *testing.T, store string, extraEnv string, tools ...[3]string) string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString("version: 1\ntools:\n")
	for _, tool := range tools {
		b.WriteString("  - name: " + tool[0] + "\n    mcp:\n      command: [" + self + "]\n")
		b.WriteString("      env: {" + fixtures.EnvStdioStore + ": " + store + extraEnv + "}\n")
		b.WriteString("      tool: " + tool[1] + "\n      arguments: '" + tool[2] + "'\n      key_argument: idempotency_key\n      timeout: 2s\n")
		b.WriteString("    result_id: /id\n    oracle:\n      command: [sh, -c, '" + fixtures.EnvStdioCount + "=" + store + " exec " + self + "']\n")
	}
	path := filepath.Join(t.TempDir(), "stdio.yaml")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// TestStdioSecretsAppearInNoOutput certifies stdio tools whose requests and
// server environment carry a secret through {{.Env}}, writing every output
// format, reproducers and a certificate, with the attempt log on: the
// secret's value is in none of them, and what went out is marked redacted.
func TestStdioSecretsAppearInNoOutput(t *testing.T) {
	raw := make([]byte, 8)
	_, _ = rand.Read(raw)
	secret := "s3cr3t-" + hex.EncodeToString(raw)
	t.Setenv("ONCEPROOF_TEST_SECRET", secret)
	store := filepath.Join(t.TempDir(), "store.jsonl")
	sp := stdioSpec(t, store, `, API_TOKEN: '{{.Env "ONCEPROOF_TEST_SECRET"}}'`,
		[3]string{"create-ticket", fixtures.StdioCreateTicket, `{"subject":"refund {{.Marker}} {{.Env "ONCEPROOF_TEST_SECRET"}}","amount":{{.Int 1 500}}}`},
		[3]string{"send-notice", fixtures.StdioSendNotice, `{"to":"ops {{.Env "ONCEPROOF_TEST_SECRET"}}","text":"notice {{.Marker}}"}`})
	out := t.TempDir()
	args := []string{"certify", "--spec", sp, "--checks", "5", "--max-backoff", "10ms", "-v", "--repro", filepath.Join(out, "repro")}
	for _, f := range []string{"text", "json", "markdown", "junit", "html"} {
		args = append(args, "--format", f, "--out", filepath.Join(out, "report."+f))
	}
	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, exitFailed, code, "%s\n%s", stdout, stderr)
	text, err := os.ReadFile(filepath.Join(out, "report.text"))
	require.NoError(t, err)
	require.Contains(t, string(text), "create-ticket: agent-ready")
	require.Contains(t, string(text), "send-notice: NOT agent-ready")

	code, cstdout, cstderr := runCLI(t, "certify", "--spec", sp, "--tool", "create-ticket", "--checks", "3", "--max-backoff", "10ms",
		"--certificate", filepath.Join(out, "cert.json"))
	require.Equal(t, exitOK, code, "%s\n%s", cstdout, cstderr)

	files := 0
	redacted := false
	require.NoError(t, filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		files++
		assert.NotContains(t, string(data), secret, "%s holds the secret", path)
		redacted = redacted || bytes.Contains(data, []byte("[redacted ONCEPROOF_TEST_SECRET]"))
		return nil
	}))
	require.GreaterOrEqual(t, files, 8, "five formats, a reproducer and its README, a certificate and its badge")
	for name, s := range map[string]string{"stdout": stdout + cstdout, "stderr (the attempt log)": stderr + cstderr} {
		assert.NotContains(t, s, secret, "%s holds the secret", name)
	}
	assert.True(t, redacted, "the reports show where the secret was")
	n, err := fixtures.StdioCount(store, secret)
	require.NoError(t, err)
	require.Positive(t, n, "the server did get the secret")

	// The reproducer takes the secret from the environment again.
	scripts, err := filepath.Glob(filepath.Join(out, "repro", "send-notice-*.sh"))
	require.NoError(t, err)
	require.NotEmpty(t, scripts)
	fresh := filepath.Join(t.TempDir(), "fresh.jsonl")
	run := exec.Command("bash", scripts[0])
	run.Env = append(os.Environ(), fixtures.EnvStdioStore+"="+fresh)
	ran, err := run.CombinedOutput()
	require.NoError(t, err, "%s", ran)
	n, err = fixtures.StdioCount(fresh, secret)
	require.NoError(t, err)
	require.Positive(t, n, "the reproducer sends the secret it took from the environment:\n%s", ran)
}

// TestDiscoverAndLintAStdioServer: discover --mcp-command lists the
// server's tools and writes a starter spec that certify accepts once its
// oracle is filled in; lint --mcp-command reads the same tools.
func TestDiscoverAndLintAStdioServer(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	store := filepath.Join(t.TempDir(), "store.jsonl")
	t.Setenv(fixtures.EnvStdioStore, store) // the discovered command's server finds its store here
	sp := filepath.Join(t.TempDir(), "stdio.yaml")
	code, out, errOut := runCLI(t, "discover", "--mcp-command", "'"+self+"'", "--out", sp)
	require.Equal(t, exitOK, code, errOut)
	for _, name := range fixtures.StdioTools() {
		require.Contains(t, out, name)
	}
	_, err = spec.Load(sp)
	require.ErrorIs(t, err, spec.ErrSpec, "the oracle placeholder is refused until filled in")
	require.Contains(t, err.Error(), spec.OraclePlaceholder)
	data, err := os.ReadFile(sp)
	require.NoError(t, err)
	require.Contains(t, string(data), "command: ["+self+"]")
	filled := strings.ReplaceAll(string(data), "oracle: "+spec.OraclePlaceholder,
		"oracle: {command: [sh, -c, '"+fixtures.EnvStdioCount+"="+store+" exec "+self+"']}")
	require.NoError(t, os.WriteFile(sp, []byte(filled), 0o644))
	s, err := spec.Load(sp)
	require.NoError(t, err, "the starter spec loads once its oracles are filled in:\n%s", filled)
	require.Len(t, s.Tools, len(fixtures.StdioTools()))
	code, out, errOut = runCLI(t, "certify", "--spec", sp, "--tool", "create-ticket", "--checks", "3", "--max-backoff", "10ms", "--quiet")
	require.Equal(t, exitOK, code, "%s\n%s", out, errOut)
	require.Contains(t, out, "create-ticket: agent-ready")

	code, out, errOut = runCLI(t, "lint", "--mcp-command", self)
	require.Contains(t, []int{exitOK, exitFailed}, code, errOut)
	for _, name := range fixtures.StdioTools() {
		require.Contains(t, out, name)
	}
	code, out, errOut = runCLI(t, "lint", "--spec", sp, "--tool", "create-ticket")
	require.Contains(t, []int{exitOK, exitFailed}, code, "%s\n%s", out, errOut)

	code, _, errOut = runCLI(t, "discover", "--mcp-command", "'unterminated")
	require.Equal(t, exitUsage, code, errOut)
	code, _, errOut = runCLI(t, "discover", "--mcp-command", filepath.Join(t.TempDir(), "no-such-server"))
	require.Equal(t, exitUnreachable, code, errOut)
}

// TestAStdioSpecNamesItsCommandWhenItCannotStart: a command that does not
// exist fails the run with the spec's file, line and field.
func TestAStdioSpecNamesItsCommandWhenItCannotStart(t *testing.T) {
	sp := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(sp, []byte(`version: 1
tools:
  - name: gone
    mcp:
      command: [/no/such/server, --stdio]
      tool: create_ticket
      arguments: '{"subject":"{{.Marker}}"}'
      key_argument: idempotency_key
    oracle: {command: [echo, "0"]}
`), 0o644))
	code, out, errOut := runCLI(t, "certify", "--spec", sp, "--checks", "1")
	require.Equal(t, exitUnreachable, code, "%s\n%s", out, errOut)
	require.Contains(t, out+errOut, "bad.yaml:5: tools[0].mcp.command")
	_ = exec.ErrNotFound
}

// TestSIGINTLeavesNoServerProcess: onceproof interrupted in the middle of
// certifying a stdio tool exits 130 and leaves no server process behind,
// nor anything a server started.
func TestSIGINTLeavesNoServerProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds onceproof")
	}
	bin := filepath.Join(t.TempDir(), "onceproof")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	self, err := os.Executable()
	require.NoError(t, err)
	tok := harnesstest.Token()
	store := filepath.Join(t.TempDir(), "store.jsonl")
	sp := filepath.Join(t.TempDir(), "stdio.yaml")
	require.NoError(t, os.WriteFile(sp, []byte(`version: 1
tools:
  - name: t
    mcp:
      command: [sh, -c, 'sleep "300.$1" & exec "$0" "$1"', `+self+`, "`+tok+`"]
      env: {`+fixtures.EnvStdioStore+`: `+store+`}
      tool: create_ticket
      arguments: '{"subject":"{{.Marker}}","amount":{{.Int 1 9}}}'
      key_argument: idempotency_key
    oracle: {command: [sh, -c, '`+fixtures.EnvStdioCount+`=`+store+` exec `+self+`']}
`), 0o644))
	cmd := exec.Command(bin, "certify", "--spec", sp, "--checks", "100000")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	running := func() bool { return len(harnesstest.ProcessesWith(tok)) >= 4 }
	if !assert.Eventually(t, running, 30*time.Second, 10*time.Millisecond, "the servers never started") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal(log.String())
	}
	time.Sleep(300 * time.Millisecond) // well inside the scenarios
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	_ = cmd.Wait()
	require.Equal(t, exitInterrupted, cmd.ProcessState.ExitCode(), log.String())
	gone := func() bool { return len(harnesstest.ProcessesWith(tok)) == 0 }
	require.Eventually(t, gone, 2*time.Second, 10*time.Millisecond, "processes left after SIGINT: %v", harnesstest.ProcessesWith(tok))
}
