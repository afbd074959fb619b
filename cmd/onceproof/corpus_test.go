package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
)

// wantRE is the header of every file of the malformed-input corpus: the exit
// code certify must end with, and what the first line of its standard error
// must hold (FILE standing for the spec's path).
var wantRE = regexp.MustCompile(`^# want: exit (\d+): (.+)\n`)

// corpusAddr is the tool address the corpus files name; the test points it
// at a running correct fixture.
const corpusAddr = "127.0.0.1:8080"

// TestMalformedInputCorpus runs every file of testdata/bad through the CLI:
// each must end with its expected exit code and say its expected message
// first, naming the file, the line and the field.
func TestMalformedInputCorpus(t *testing.T) {
	files, err := filepath.Glob("../../testdata/bad/*.yaml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 40, "the corpus")
	srv, err := fixtures.Start(fixtures.Correct, "127.0.0.1:0", fixtures.Options{})
	require.NoError(t, err)
	defer srv.Close()
	dir := t.TempDir()
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			m := wantRE.FindSubmatch(src)
			require.NotNil(t, m, "the file starts with # want: exit N: MESSAGE")
			code, _ := strconv.Atoi(string(m[1]))
			path := filepath.Join(dir, filepath.Base(file))
			require.NoError(t, os.WriteFile(path, bytes.ReplaceAll(src, []byte(corpusAddr), []byte(srv.Addr())), 0o644))
			want := strings.ReplaceAll(string(m[2]), "FILE", path)

			var out, errb bytes.Buffer
			got := run(context.Background(), []string{"certify", "--spec", path, "--checks", "1", "--quiet", "--max-backoff", "10ms"}, &out, &errb)
			stderr := strings.ReplaceAll(errb.String(), srv.Addr(), corpusAddr)
			require.Equal(t, code, got, "exit code\nstderr:\n%s", stderr)
			first, _, _ := strings.Cut(stderr, "\n")
			require.Contains(t, first, want, "the first thing said")
			if code == exitUsage {
				require.Empty(t, out.String(), "nothing ran")
			}
		})
	}
}
