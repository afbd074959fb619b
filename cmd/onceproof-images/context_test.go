package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLdd(t *testing.T) {
	out := `/usr/bin/a:
	linux-vdso.so.1 (0x00007ffd)
	libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x00007f54)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f54)
	/lib64/ld-linux-x86-64.so.2 (0x00007f54)
/usr/bin/static:
	not a dynamic executable
/usr/bin/b:
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f54)
	libm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f54)
`
	libs, err := parseLdd(out)
	require.NoError(t, err)
	assert.Equal(t, []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libm.so.6",
		"/lib/x86_64-linux-gnu/libz.so.1", "/lib64/ld-linux-x86-64.so.2"}, libs)

	_, err = parseLdd("/usr/bin/x:\n\tlibgone.so.3 => not found\n")
	assert.ErrorContains(t, err, "libgone.so.3 not found")
}

func TestMissingHostErrorNamesThePackage(t *testing.T) {
	err := requireHost(filepath.Join(t.TempDir(), "postgres"), "postgresql-15", "PostgreSQL 15")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "postgresql-15")
	assert.Contains(t, err.Error(), installHint)
	assert.NoError(t, requireHost(t.TempDir(), "x", "x"))
}

func sampleContext(t *testing.T) (*buildContext, string) {
	t.Helper()
	host := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(host, "tree", "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(host, "tree", "sub", "f"), []byte("f"), 0o640))
	require.NoError(t, os.WriteFile(filepath.Join(host, "outside"), []byte("outside"), 0o644))
	require.NoError(t, os.Symlink("sub/f", filepath.Join(host, "tree", "in-link")))
	require.NoError(t, os.Symlink(filepath.Join(host, "outside"), filepath.Join(host, "tree", "out-link")))
	require.NoError(t, os.Symlink("nowhere", filepath.Join(host, "tree", "dangling")))

	c := newBuildContext()
	require.NoError(t, c.addHostTree(rootTree, filepath.Join(host, "tree"), func(p string) bool { return strings.HasSuffix(p, "skipped") }))
	c.addData(rootTree+"/etc/passwd", []byte("root:x:0:0::/:/x\n"), 0o644)
	c.addDir(rootTree+"/tmp", 0o777|os.ModeSticky)
	c.addDir(ownedTree+"/data", 0o700)
	c.addSymlink(rootTree+"/bin/sh", "/entry")
	c.dockerfile = "FROM scratch\n"
	return c, host
}

func TestBuildContextHash(t *testing.T) {
	c, host := sampleContext(t)
	h1, err := c.hash()
	require.NoError(t, err)
	h2, err := c.hash()
	require.NoError(t, err)
	assert.Equal(t, h1, h2, "stable")
	assert.Len(t, h1, 64)

	changes := map[string]func(){
		"content":    func() { require.NoError(t, os.WriteFile(filepath.Join(host, "tree", "sub", "f"), []byte("g"), 0o640)) },
		"dockerfile": func() { c.dockerfile += "EXPOSE 1\n" },
		"mode":       func() { c.addDir(rootTree+"/tmp", 0o777) },
		"new file":   func() { c.addData(rootTree+"/new", nil, 0o644) },
		"link":       func() { c.addSymlink(rootTree+"/bin/sh", "/other") },
	}
	prev := h1
	for name, change := range changes {
		change()
		h, err := c.hash()
		require.NoError(t, err)
		assert.NotEqual(t, prev, h, name)
		prev = h
	}
}

func TestBuildContextWrite(t *testing.T) {
	c, host := sampleContext(t)
	p := filepath.ToSlash(filepath.Join(host, "tree"))
	// Links inside the tree stay links; a link out of it becomes a file; a
	// dangling link is left out.
	assert.Equal(t, kindSymlink, c.entries[clean(rootTree+p+"/in-link")].kind)
	assert.Equal(t, kindFile, c.entries[clean(rootTree+p+"/out-link")].kind)
	assert.NotContains(t, c.entries, clean(rootTree+p+"/dangling"))

	dir := t.TempDir()
	require.NoError(t, c.write(dir))
	b, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	require.NoError(t, err)
	assert.Equal(t, "FROM scratch\n", string(b))

	st, err := os.Stat(filepath.Join(dir, rootTree, "tmp"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeDir|os.ModeSticky|0o777, st.Mode())
	st, err = os.Stat(filepath.Join(dir, ownedTree, "data"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeDir|0o700, st.Mode())
	st, err = os.Stat(filepath.Join(dir, rootTree, p, "sub", "f"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), st.Mode())
	link, err := os.Readlink(filepath.Join(dir, rootTree, p, "in-link"))
	require.NoError(t, err)
	assert.Equal(t, "sub/f", link)
	b, err = os.ReadFile(filepath.Join(dir, rootTree, p, "out-link"))
	require.NoError(t, err)
	assert.Equal(t, "outside", string(b))
	link, err = os.Readlink(filepath.Join(dir, rootTree, "bin", "sh"))
	require.NoError(t, err)
	assert.Equal(t, "/entry", link)
}

func TestSelectImages(t *testing.T) {
	all, err := selectImages(nil)
	require.NoError(t, err)
	assert.Len(t, all, 4)
	sel, err := selectImages([]string{"redis", "onceproof/fixture:dev"})
	require.NoError(t, err)
	require.Len(t, sel, 2)
	assert.Equal(t, "onceproof/fixture:dev", sel[0].name, "build order, not flag order")
	assert.Equal(t, "onceproof/redis:7", sel[1].name)
	_, err = selectImages([]string{"mysql"})
	assert.ErrorContains(t, err, `unknown image "mysql"`)
}

func TestRunFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, run(t.Context(), []string{"--list"}, &stdout, &stderr))
	for _, im := range images {
		assert.Contains(t, stdout.String(), im.name)
	}
	assert.Equal(t, 2, run(t.Context(), []string{"--only", "mysql"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "unknown image")
	assert.Equal(t, 2, run(t.Context(), []string{"--bogus"}, &stdout, &stderr))
	assert.Equal(t, 2, run(t.Context(), []string{"extra"}, &stdout, &stderr))
}

func TestSimpleContexts(t *testing.T) {
	bins := map[string]string{"onceproof-fixture": "/bin/fixture", "toxiproxy-server": "/bin/toxiproxy"}
	fc, err := fixtureContext(t.Context(), bins)
	require.NoError(t, err)
	assert.Contains(t, fc.dockerfile, `ENTRYPOINT ["/onceproof-fixture"]`)
	assert.Contains(t, fc.dockerfile, `CMD ["--listen", "0.0.0.0:8080"]`)
	assert.Contains(t, fc.dockerfile, "EXPOSE 8080")
	assert.Equal(t, "/bin/fixture", fc.entries[rootTree+"/onceproof-fixture"].src)

	tc, err := toxiproxyContext(t.Context(), bins)
	require.NoError(t, err)
	assert.Contains(t, tc.dockerfile, `ENTRYPOINT ["/toxiproxy-server", "-host", "0.0.0.0"]`)
	assert.Contains(t, tc.dockerfile, "EXPOSE 8474")
}
