package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// releaseServer serves a release layout as GitHub does: /releases/latest
// redirects to /releases/tag/TAG, /releases/download/TAG/ASSET is the
// asset. files maps "TAG/ASSET" to its content.
type releaseServer struct {
	*httptest.Server
	latest    string
	files     map[string][]byte
	downloads atomic.Int32
}

func newReleaseServer(t *testing.T, latest string, files map[string][]byte) *releaseServer {
	rs := &releaseServer{latest: latest, files: files}
	mux := http.NewServeMux()
	mux.HandleFunc("/releases/latest", func(w http.ResponseWriter, r *http.Request) {
		if rs.latest == "" {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, "/releases/tag/"+rs.latest, http.StatusFound)
	})
	mux.HandleFunc("/releases/tag/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "release page") })
	mux.HandleFunc("/releases/download/", func(w http.ResponseWriter, r *http.Request) {
		data, ok := rs.files[strings.TrimPrefix(r.URL.Path, "/releases/download/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		rs.downloads.Add(1)
		_, _ = w.Write(data)
	})
	rs.Server = httptest.NewServer(mux)
	t.Cleanup(rs.Close)
	return rs
}

// releaseArchive is a release archive holding a onceproof built as
// version, and the checksums file that lists it, named as the release
// config names them.
func releaseArchive(t *testing.T, version string) (asset string, archive []byte, sums string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "onceproof")
	out, err := exec.Command("go", "build", "-ldflags", "-X main.version="+version, "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	exe, err := os.ReadFile(bin)
	require.NoError(t, err)
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name string
		data []byte
		mode int64
	}{{"LICENSE", []byte("Apache License 2.0\n"), 0o644}, {"onceproof", exe, 0o755}} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))}))
		_, err := tw.Write(f.data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	v := strings.TrimPrefix(version, "v")
	asset = fmt.Sprintf("onceproof_%s_%s_%s.tar.gz", v, runtime.GOOS, runtime.GOARCH)
	sum := sha256.Sum256(b.Bytes())
	sums = fmt.Sprintf("%s  onceproof_%s_%s_arm64.tar.gz\n%s  %s\n", strings.Repeat("0", 64), v, runtime.GOOS, hex.EncodeToString(sum[:]), asset)
	return asset, b.Bytes(), sums
}

// TestActionInstallsARelease runs the action's resolve and install steps
// against a local server laid out like the GitHub releases: the latest
// release is found, its archive checked against the checksums and
// installed; an installed (cached) binary is not downloaded again; an
// archive whose SHA-256 is not the listed one is refused; a version with
// no release, or one that is not a release, is built from source.
func TestActionInstallsARelease(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test builds a tar.gz release")
	}
	a := loadAction(t)
	asset, archive, sums := releaseArchive(t, "v9.9.9")
	tampered := append([]byte(nil), archive...)
	tampered[len(tampered)/2] ^= 0xff
	srv := newReleaseServer(t, "v9.9.9", map[string][]byte{
		"v9.9.9/" + asset: archive, "v9.9.9/onceproof_9.9.9_checksums.txt": []byte(sums),
		"v9.9.8/" + strings.ReplaceAll(asset, "9.9.9", "9.9.8"): tampered,
		"v9.9.8/onceproof_9.9.8_checksums.txt":                  []byte(strings.ReplaceAll(sums, "9.9.9", "9.9.8")),
	})
	runnerOS := map[string]string{"linux": "Linux", "darwin": "macOS"}[runtime.GOOS]
	runnerArch := map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	require.NotEmpty(t, runnerOS+runnerArch)
	cache := t.TempDir()
	env := []string{"RUNNER_OS=" + runnerOS, "RUNNER_ARCH=" + runnerArch, "RUNNER_TOOL_CACHE=" + cache, "RUNNER_TEMP=" + t.TempDir()}

	install := func(t *testing.T, version string) (resolved, installed map[string]string, log string, code int) {
		t.Helper()
		inputs := map[string]string{"version": version, "release-url": srv.URL + "/releases"}
		resolved, log, code = runStep(t, a.step(t, "resolve"), inputs, nil, env)
		require.Equal(t, 0, code, log)
		if resolved["source"] == "true" {
			return resolved, nil, log, code
		}
		installed, log, code = runStep(t, a.step(t, "install"), inputs, map[string]map[string]string{"resolve": resolved}, env)
		return resolved, installed, log, code
	}

	t.Run("latest", func(t *testing.T) {
		resolved, installed, log, code := install(t, "latest")
		require.Equal(t, 0, code, log)
		require.Equal(t, "v9.9.9", resolved["version"], "latest is the tag the release page redirects to")
		require.Equal(t, "false", installed["build"])
		require.Contains(t, log, "installed onceproof v9.9.9 ("+asset+", sha256 ")
		out, err := exec.Command(resolved["bin"]).CombinedOutput()
		require.Error(t, err, "no command is a usage error")
		out, err = exec.Command(resolved["bin"], "--version").CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Equal(t, "onceproof v9.9.9\n", string(out), "--version is the release's")
		require.Equal(t, filepath.Join(cache, "onceproof", "v9.9.9", runtime.GOOS+"-"+runtime.GOARCH, "onceproof"), resolved["bin"], "the cached directory")

		n := srv.downloads.Load()
		_, installed, log, code = install(t, "v9.9.9")
		require.Equal(t, 0, code, log)
		require.Equal(t, "false", installed["build"])
		require.Equal(t, n, srv.downloads.Load(), "an installed release (a cache hit) is not downloaded again")
	})
	t.Run("tampered archive", func(t *testing.T) {
		resolved, _, log, code := install(t, "v9.9.8")
		require.NotEqual(t, 0, code, "a checksum mismatch fails the step: %s", log)
		require.Contains(t, log, "SHA-256")
		require.Contains(t, log, "not installed")
		require.NoFileExists(t, resolved["bin"])
	})
	t.Run("no such release", func(t *testing.T) {
		_, installed, log, code := install(t, "v9.9.7")
		require.Equal(t, 0, code, log)
		require.Equal(t, "true", installed["build"], "built from source instead")
		require.Contains(t, log, "building it from source")
	})
	t.Run("not a release", func(t *testing.T) {
		resolved, _, log, _ := install(t, "main")
		require.Equal(t, "true", resolved["source"], log)
		require.Equal(t, "main", resolved["version"])
	})
	t.Run("no release at all", func(t *testing.T) {
		srv.latest = ""
		defer func() { srv.latest = "v9.9.9" }()
		resolved, _, log, _ := install(t, "latest")
		require.Equal(t, "true", resolved["source"], "latest is then built with go install @latest: %s", log)
	})
	t.Run("bad version", func(t *testing.T) {
		_, log, code := runStep(t, a.step(t, "resolve"), map[string]string{"version": "v1; rm -rf /", "release-url": srv.URL}, nil, env)
		require.NotEqual(t, 0, code)
		require.Contains(t, log, "want a release tag")
	})
}

// TestReleaseConfigMatchesTheAction ties .goreleaser.yaml to what the
// action downloads: the archive and checksums names, the targets, the
// version stamped into the binary.
func TestReleaseConfigMatchesTheAction(t *testing.T) {
	var cfg struct {
		Version int `yaml:"version"`
		Builds  []struct {
			Main    string   `yaml:"main"`
			Binary  string   `yaml:"binary"`
			Env     []string `yaml:"env"`
			Ldflags []string `yaml:"ldflags"`
			Goos    []string `yaml:"goos"`
			Goarch  []string `yaml:"goarch"`
		} `yaml:"builds"`
		Archives []struct {
			NameTemplate    string   `yaml:"name_template"`
			Formats         []string `yaml:"formats"`
			FormatOverrides []struct {
				Goos    string   `yaml:"goos"`
				Formats []string `yaml:"formats"`
			} `yaml:"format_overrides"`
			Files []string `yaml:"files"`
		} `yaml:"archives"`
		Checksum struct {
			NameTemplate string `yaml:"name_template"`
			Algorithm    string `yaml:"algorithm"`
		} `yaml:"checksum"`
		Sboms []struct {
			Cmd       string `yaml:"cmd"`
			Artifacts string `yaml:"artifacts"`
		} `yaml:"sboms"`
		Dockers []struct {
			Goos       string `yaml:"goos"`
			Goarch     string `yaml:"goarch"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"dockers"`
	}
	data, err := os.ReadFile("../../.goreleaser.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &cfg))
	require.Equal(t, 2, cfg.Version, "GoReleaser v2")
	require.Len(t, cfg.Builds, 1)
	b := cfg.Builds[0]
	require.Equal(t, "./cmd/onceproof", b.Main)
	require.Contains(t, b.Env, "CGO_ENABLED=0")
	require.ElementsMatch(t, []string{"linux", "darwin", "windows"}, b.Goos)
	require.ElementsMatch(t, []string{"amd64", "arm64"}, b.Goarch)
	require.Contains(t, strings.Join(b.Ldflags, " "), "-X main.version=v{{ .Version }}", "--version shows the release")
	require.Len(t, cfg.Archives, 1)
	require.Equal(t, "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}", cfg.Archives[0].NameTemplate)
	require.Equal(t, []string{"tar.gz"}, cfg.Archives[0].Formats)
	require.Equal(t, "windows", cfg.Archives[0].FormatOverrides[0].Goos)
	require.Equal(t, []string{"zip"}, cfg.Archives[0].FormatOverrides[0].Formats)
	require.Contains(t, cfg.Archives[0].Files, "LICENSE")
	require.Equal(t, "{{ .ProjectName }}_{{ .Version }}_checksums.txt", cfg.Checksum.NameTemplate)
	require.Equal(t, "sha256", cfg.Checksum.Algorithm)
	require.Equal(t, "cyclonedx-gomod", cfg.Sboms[0].Cmd)
	require.Equal(t, "archive", cfg.Sboms[0].Artifacts)
	require.Len(t, cfg.Dockers, 2)
	for _, d := range cfg.Dockers {
		require.Equal(t, "linux", d.Goos)
		require.FileExists(t, filepath.Join("../..", d.Dockerfile))
	}
	run := loadAction(t).step(t, "install").Run
	require.Contains(t, run, `asset="onceproof_${v}_${TARGET_OS}_${TARGET_ARCH}.$ext"`)
	require.Contains(t, run, `sums="onceproof_${v}_checksums.txt"`)
	require.Contains(t, run, `[[ "$TARGET_OS" == windows ]] && ext=zip`)
	lic, err := os.ReadFile("../../LICENSE")
	require.NoError(t, err)
	require.Contains(t, string(lic), "Apache License\n                           Version 2.0, January 2004")
	require.Contains(t, string(lic), "END OF TERMS AND CONDITIONS")
}
