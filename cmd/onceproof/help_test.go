package main

import (
	"bytes"
	"flag"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/fixtures"
)

func TestHelpForEveryCommand(t *testing.T) {
	for _, cmd := range []string{"certify", "certify-client", "chaos", "demo", "discover", "lint", "report", "verify-certificate", "sweep", "version", "help"} {
		t.Run(cmd, func(t *testing.T) {
			code, out, errOut := runCLI(t, "help", cmd)
			require.Equal(t, exitOK, code, errOut)
			require.Empty(t, errOut)
			if cmd != "help" {
				require.Contains(t, out, "Usage: onceproof "+cmd, "help %s prints that command's help, not the top-level one", cmd)
			}
			code, again, _ := runCLI(t, cmd, "--help")
			require.Equal(t, exitOK, code)
			if cmd != "version" && cmd != "help" {
				require.Equal(t, out, again, "help %s and %s --help agree", cmd, cmd)
			}
		})
	}
	code, _, errOut := runCLI(t, "help", "frobnicate")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, `unknown command "frobnicate"`)
}

func TestHelpSpellsFlagsAsTheREADMEDoes(t *testing.T) {
	_, out, _ := runCLI(t, "help", "certify")
	for _, want := range []string{"\n  --checks N\n", "\n  --spec FILE\n", "\n  --max-backoff duration\n", "\n  --scenario ID\n", "\n  --image NAME=LOCAL\n", "\n  -v\n"} {
		require.Contains(t, out, want)
	}
	require.Contains(t, out, "\n  --local-images\n", "a boolean flag takes no argument")
	require.Contains(t, out, "\n  --allow-remote\n")
	require.NotContains(t, out, "\n  -checks", "flags are spelled with two dashes")
	require.Contains(t, out, "(default 100)")
}

func TestPrintFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("dry", false, "do nothing, `really`")
	fs.Int("n", 3, "`COUNT` of things")
	fs.String("name", "bob", "who")
	fs.Duration("wait", 0, "how long")
	var b bytes.Buffer
	printFlags(&b, fs)
	require.Equal(t, "  --dry\n    \tdo nothing, really\n"+
		"  -n COUNT\n    \tCOUNT of things (default 3)\n"+
		"  --name string\n    \twho (default \"bob\")\n"+
		"  --wait duration\n    \thow long\n", b.String())
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version", "-version"} {
		code, out, _ := runCLI(t, arg)
		require.Equal(t, exitOK, code, arg)
		require.Equal(t, "onceproof "+onceproofVersion()+"\n", out, arg)
	}
	bi, ok := debug.ReadBuildInfo()
	if ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		require.Equal(t, bi.Main.Version, onceproofVersion(), "the module version comes first")
		return
	}
	require.Equal(t, "devel", onceproofVersion(), "no module version and no -ldflags value")
	old := version
	t.Cleanup(func() { version = old })
	version = "v1.2.3-ldflags"
	require.Equal(t, "v1.2.3-ldflags", onceproofVersion(), "the -ldflags value when the build has no module version")
}

func TestTextOutputsUseExactPlurals(t *testing.T) {
	srv, err := fixtures.Start(fixtures.Correct, "127.0.0.1:0", fixtures.Options{})
	require.NoError(t, err)
	defer srv.Close()
	spec := writeSpec(t, srv.Addr())
	code, out, errOut := runCLI(t, "certify", "--spec", spec, "--checks", "1", "--scenario", "distinct-keys", "--max-backoff", "10ms")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "distinct-keys          PASS    1 check, 1 valid trial, seed ")
	require.Contains(t, errOut, "(1 check per scenario, seed ")
	require.NotContains(t, out+errOut, "1 checks")
	require.NotContains(t, out+errOut, "1 valid trials")

}
