package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// image is one image this command builds.
type image struct {
	name        string // the tag, e.g. onceproof/postgres:15
	short       string // the name --only also accepts, e.g. postgres
	description string
	binaries    []string // Go binaries (keys of goBinaries) the context holds
	// hostCheck, if not nil, verifies the host packages the image copies
	// from, naming the package to install.
	hostCheck func() error
	// context describes the build context; bins maps goBinaries keys to the
	// freshly built files.
	context func(ctx context.Context, bins map[string]string) (*buildContext, error)
}

// goBinaries are the static Go programs the images hold, by output name, with
// the package each is built from (in the onceproof module, whose go.mod
// pins toxiproxy).
var goBinaries = map[string]string{
	"onceproof-fixture":    "./cmd/onceproof-fixture",
	"toxiproxy-server":     "github.com/Shopify/toxiproxy/v2/cmd/server",
	"onceproof-entrypoint": "./cmd/onceproof-images/entrypoint",
}

// toxiproxyModule is the module toxiproxy-server is built from.
const toxiproxyModule = "github.com/Shopify/toxiproxy/v2"

// images lists every image, in build order.
var images = []image{
	{
		name:        "onceproof/fixture:dev",
		short:       "fixture",
		description: "the onceproof-fixture HTTP server (./cmd/onceproof-fixture), static, FROM scratch; listens on 0.0.0.0:8080",
		binaries:    []string{"onceproof-fixture"},
		context:     fixtureContext,
	},
	{
		name:        "onceproof/toxiproxy:dev",
		short:       "toxiproxy",
		description: "toxiproxy-server built from the module's github.com/Shopify/toxiproxy/v2, static, FROM scratch; API on 0.0.0.0:8474",
		binaries:    []string{"toxiproxy-server"},
		context:     toxiproxyContext,
	},
	{
		name:        "onceproof/postgres:15",
		short:       "postgres",
		description: "PostgreSQL 15 from the host's postgresql-15 package with its libraries, FROM scratch; entrypoint compatible with the official image (POSTGRES_USER/PASSWORD/DB, /docker-entrypoint-initdb.d/*.sql)",
		binaries:    []string{"onceproof-entrypoint"},
		hostCheck:   checkPostgresHost,
		context:     postgresContext,
	},
	{
		name:        "onceproof/redis:7",
		short:       "redis",
		description: "Redis 7 from the host's redis-server package with its libraries, FROM scratch; protected mode off, like the official image",
		binaries:    []string{"onceproof-entrypoint"},
		hostCheck:   checkRedisHost,
		context:     redisContext,
	},
}

// Options control Build.
type Options struct {
	// Only names the images to build (full names or their short names:
	// fixture, toxiproxy, postgres, redis); empty means all.
	Only []string
	// Force rebuilds images that are up to date.
	Force bool
	// Out receives one line per image; nil discards them.
	Out io.Writer
}

// Status says what Build did with an image.
type Status string

const (
	StatusBuilt    Status = "built"
	StatusUpToDate Status = "up to date"
)

// Result is what Build did with one image.
type Result struct {
	Image    string
	Status   Status
	Hash     string // the context hash the image is labelled with
	Duration time.Duration
}

// selectImages returns the images only names, in build order.
func selectImages(only []string) ([]image, error) {
	if len(only) == 0 {
		return images, nil
	}
	want := map[string]bool{}
	for _, n := range only {
		found := false
		for _, im := range images {
			if n == im.name || n == im.short {
				want[im.name], found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown image %q (see --list)", n)
		}
	}
	var sel []image
	for _, im := range images {
		if want[im.name] {
			sel = append(sel, im)
		}
	}
	return sel, nil
}

// Build builds the selected images that are missing or whose build context
// changed, and reports what it did with each.
func Build(ctx context.Context, opts Options) ([]Result, error) {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	sel, err := selectImages(opts.Only)
	if err != nil {
		return nil, err
	}
	if err := checkDocker(ctx); err != nil {
		return nil, err
	}
	for _, im := range sel {
		if im.hostCheck == nil {
			continue
		}
		if err := im.hostCheck(); err != nil {
			return nil, fmt.Errorf("%s: %w", im.name, err)
		}
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "onceproof-images-")
	if err != nil {
		return nil, err
	}
	defer removeAll(tmp)

	need := map[string]bool{}
	for _, im := range sel {
		for _, b := range im.binaries {
			need[b] = true
		}
	}
	bins, err := buildGoBinaries(ctx, root, filepath.Join(tmp, "bin"), need)
	if err != nil {
		return nil, err
	}

	width := 0
	for _, im := range sel {
		width = max(width, len(im.name))
	}
	var results []Result
	for _, im := range sel {
		r, err := buildOne(ctx, im, bins, tmp, opts.Force)
		if err != nil {
			return results, fmt.Errorf("%s: %w", im.name, err)
		}
		fmt.Fprintf(out, "%-*s  %-10s  (%s)\n", width, r.Image, r.Status, r.Duration.Round(10*time.Millisecond))
		results = append(results, r)
	}
	return results, nil
}

// buildOne builds one image unless an image of that name already carries
// its context hash.
func buildOne(ctx context.Context, im image, bins map[string]string, tmp string, force bool) (Result, error) {
	start := time.Now()
	bc, err := im.context(ctx, bins)
	if err != nil {
		return Result{}, err
	}
	hash, err := bc.hash()
	if err != nil {
		return Result{}, err
	}
	r := Result{Image: im.name, Hash: hash}
	oldID, labels, exists, err := imageInfo(ctx, im.name)
	if err != nil {
		return Result{}, err
	}
	if exists && !force && labels[labelHash] == hash && labels[labelImage] == "true" {
		r.Status, r.Duration = StatusUpToDate, time.Since(start)
		return r, nil
	}
	dir, err := os.MkdirTemp(tmp, "context-")
	if err != nil {
		return Result{}, err
	}
	defer removeAll(dir)
	if err := bc.write(dir); err != nil {
		return Result{}, fmt.Errorf("writing the build context: %w", err)
	}
	if err := buildImage(ctx, im.name, dir, hash); err != nil {
		return Result{}, err
	}
	if exists {
		// The previous image lost its tag; remove it unless something
		// still uses it (then docker refuses, which is fine).
		if newID, _, _, err := imageInfo(ctx, im.name); err == nil && newID != oldID {
			_, _ = docker(ctx, "image", "rm", oldID)
		}
	}
	r.Status, r.Duration = StatusBuilt, time.Since(start)
	return r, nil
}

// moduleRoot returns the onceproof module's directory (the main module, or
// the one the current module requires).
func moduleRoot(ctx context.Context) (string, error) {
	out, err := goList(ctx, "", "{{.Dir}}", modulePath)
	if err != nil || out == "" {
		return "", fmt.Errorf("finding the %s module: %v (run onceproof-images inside its source tree)", modulePath, err)
	}
	return out, nil
}

// modulePath is this project's module.
const modulePath = "github.com/onceproof/onceproof"

// goList runs `go list -m -f format module` in dir.
func goList(ctx context.Context, dir, format, module string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", format, module)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %v: %s", module, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// buildGoBinaries builds the needed Go binaries, static and reproducible (so
// that unchanged sources give unchanged files and so an unchanged hash), in
// parallel, into dir.
func buildGoBinaries(ctx context.Context, root, dir string, need map[string]bool) (map[string]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(need))
	for n := range need {
		names = append(names, n)
	}
	sort.Strings(names)
	bins := map[string]string{}
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		outPath := filepath.Join(dir, n)
		bins[n] = outPath
		wg.Add(1)
		go func() {
			defer wg.Done()
			ldflags := "-s -w"
			if n == "toxiproxy-server" {
				// Report the module's version on /version, as a release
				// build does, instead of the default "git".
				v, err := goList(ctx, root, "{{.Version}}", toxiproxyModule)
				if err != nil {
					errs[i] = err
					return
				}
				ldflags += " -X " + toxiproxyModule + ".Version=" + strings.TrimPrefix(v, "v")
			}
			cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags="+ldflags, "-o", outPath, goBinaries[n])
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
			if b, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("go build %s: %v\n%s", goBinaries[n], err, b)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return bins, nil
}

// removeAll removes a temporary tree, making its directories writable first
// (contexts may hold read-only directories).
func removeAll(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// listImages prints the images and what they are.
func listImages(w io.Writer) {
	width := 0
	for _, im := range images {
		width = max(width, len(im.name))
	}
	for _, im := range images {
		fmt.Fprintf(w, "%-*s  %s\n", width, im.name, im.description)
	}
}

// Contexts.

const (
	dockerfileHeader = "# Generated by onceproof-images; the build context is laid out by it too.\nFROM scratch\n"
	scratchTmp       = rootTree + "/tmp"
)

func fixtureContext(_ context.Context, bins map[string]string) (*buildContext, error) {
	c := newBuildContext()
	c.addFile(rootTree+"/onceproof-fixture", bins["onceproof-fixture"], 0o755)
	c.addDir(scratchTmp, 0o777|os.ModeSticky)
	c.dockerfile = dockerfileHeader + `COPY ` + rootTree + `/ /
EXPOSE 8080
ENTRYPOINT ["/onceproof-fixture"]
CMD ["--listen", "0.0.0.0:8080"]
`
	return c, nil
}

func toxiproxyContext(_ context.Context, bins map[string]string) (*buildContext, error) {
	c := newBuildContext()
	c.addFile(rootTree+"/toxiproxy-server", bins["toxiproxy-server"], 0o755)
	c.addDir(scratchTmp, 0o777|os.ModeSticky)
	c.dockerfile = dockerfileHeader + `COPY ` + rootTree + `/ /
EXPOSE 8474
ENTRYPOINT ["/toxiproxy-server", "-host", "0.0.0.0"]
`
	return c, nil
}

// userFiles adds /etc/passwd, /etc/group and /etc/nsswitch.conf with root,
// the service user (uid and gid 999) and nobody.
func userFiles(c *buildContext, user, gecos, home string) {
	c.addData(rootTree+"/etc/passwd", []byte(fmt.Sprintf(
		"root:x:0:0:root:/root:/sbin/nologin\n%s:x:999:999:%s:%s:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n",
		user, gecos, home)), 0o644)
	c.addData(rootTree+"/etc/group", []byte(fmt.Sprintf("root:x:0:\n%s:x:999:\nnogroup:x:65534:\n", user)), 0o644)
	c.addData(rootTree+"/etc/nsswitch.conf", []byte("passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n"), 0o644)
}

// addLibraries adds every shared library the context's host ELF files load
// (by ldd, loader included) at its path, as a regular file. glibc loads the
// NSS "files" module with dlopen, which ldd cannot see; since glibc 2.34 it is
// built into libc, but libnss_files.so.2 is added too where the host has it.
func addLibraries(ctx context.Context, c *buildContext, elfDirs ...string) error {
	var elves []string
	for _, p := range c.paths() {
		e := c.entries[p]
		if e.kind != kindFile || e.src == "" {
			continue
		}
		for _, d := range elfDirs {
			if within(e.src, d) && isELF(e.src) {
				elves = append(elves, e.src)
				break
			}
		}
	}
	libs, err := sharedLibraries(ctx, elves)
	if err != nil {
		return err
	}
	for _, l := range libs {
		if strings.HasSuffix(l, "/libc.so.6") {
			if nss := path.Join(path.Dir(l), "libnss_files.so.2"); fileExists(nss) {
				libs = append(libs, nss)
			}
		}
	}
	for _, l := range libs {
		if err := c.addHostFile(rootTree, l); err != nil {
			return fmt.Errorf("library %s: %w", l, err)
		}
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// checkPostgresHost verifies what the PostgreSQL image copies from the host.
func checkPostgresHost() error {
	const pkg, what = "postgresql-15", "PostgreSQL 15"
	for _, p := range []string{pgBinDir + "/postgres", pgBinDir + "/initdb", pgBinDir + "/pg_ctl", pgLibDir + "/plpgsql.so", pgShareDir + "/postgres.bki"} {
		if err := requireHost(p, pkg, what); err != nil {
			return err
		}
	}
	if err := requireHost(zoneinfo+"/UTC", "tzdata", "The time zone database PostgreSQL uses"); err != nil {
		return err
	}
	if err := requireHost(localeBin, "libc-bin", "locale(1), which initdb runs,"); err != nil {
		return err
	}
	_, err := exec.LookPath("ldd")
	if err != nil {
		return &missingHostError{path: "ldd", pkg: "libc-bin", purpose: "ldd(1), which lists the libraries to copy,"}
	}
	return nil
}

// checkRedisHost verifies what the Redis image copies from the host.
func checkRedisHost() error {
	if err := requireHost(redisBin, "redis-server", "Redis 7"); err != nil {
		return err
	}
	if _, err := exec.LookPath("ldd"); err != nil {
		return &missingHostError{path: "ldd", pkg: "libc-bin", purpose: "ldd(1), which lists the libraries to copy,"}
	}
	return nil
}

func postgresContext(ctx context.Context, bins map[string]string) (*buildContext, error) {
	if err := checkPostgresHost(); err != nil {
		return nil, err
	}
	c := newBuildContext()
	// JIT needs libLLVM (over 100 MB, and not among ldd's answers for the
	// server); without llvmjit.so PostgreSQL simply runs without JIT.
	noJIT := func(p string) bool {
		b := filepath.Base(p)
		return b == "llvmjit.so" || b == "llvmjit_types.bc" || p == pgLibDir+"/bitcode"
	}
	for _, t := range []struct {
		dir  string
		skip func(string) bool
	}{{pgBinDir, nil}, {pgLibDir, noJIT}, {pgShareDir, nil}, {zoneinfo, nil}} {
		if err := c.addHostTree(rootTree, t.dir, t.skip); err != nil {
			return nil, err
		}
	}
	// initdb runs `locale -a` (to import the system's collations).
	if err := c.addHostFile(rootTree, localeBin); err != nil {
		return nil, err
	}
	if fileExists(localeDir) {
		if err := c.addHostTree(rootTree, localeDir, nil); err != nil {
			return nil, err
		}
	}
	if err := addLibraries(ctx, c, pgBinDir, pgLibDir, localeBin); err != nil {
		return nil, err
	}

	c.addFile(rootTree+"/usr/local/bin/postgres-entrypoint", bins["onceproof-entrypoint"], 0o755)
	// initdb and pg_ctl start programs through /bin/sh (popen, system): the
	// entrypoint binary, started as "sh", runs those simple commands.
	c.addSymlink(rootTree+"/bin/sh", "/usr/local/bin/postgres-entrypoint")
	userFiles(c, "postgres", "PostgreSQL administrator", "/var/lib/postgresql")
	c.addDir(scratchTmp, 0o777|os.ModeSticky)
	c.addDir(rootTree+"/docker-entrypoint-initdb.d", 0o755)
	c.addDir(ownedTree+"/var/lib/postgresql", 0o755)
	c.addDir(ownedTree+"/var/lib/postgresql/data", 0o700)
	c.addDir(ownedTree+"/var/run/postgresql", 0o777|os.ModeSetgid|os.ModeSticky)

	c.dockerfile = dockerfileHeader + `COPY ` + rootTree + `/ /
COPY --chown=999:999 ` + ownedTree + `/ /
ENV PATH=/usr/local/bin:` + pgBinDir + `:/usr/bin:/bin PGDATA=/var/lib/postgresql/data
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint"]
CMD ["postgres"]
`
	return c, nil
}

func redisContext(ctx context.Context, bins map[string]string) (*buildContext, error) {
	if err := checkRedisHost(); err != nil {
		return nil, err
	}
	c := newBuildContext()
	// /usr/bin/redis-server is a link to redis-check-rdb on Debian (one
	// binary that picks its role from argv[0]); the image gets the file.
	c.addFile(rootTree+redisBin, redisBin, 0o755)
	elfDirs := []string{redisBin}
	if cli := "/usr/bin/redis-cli"; fileExists(cli) {
		c.addFile(rootTree+cli, cli, 0o755)
		elfDirs = append(elfDirs, cli)
	}
	if err := addLibraries(ctx, c, elfDirs...); err != nil {
		return nil, err
	}
	c.addFile(rootTree+"/usr/local/bin/redis-entrypoint", bins["onceproof-entrypoint"], 0o755)
	userFiles(c, "redis", "Redis", "/data")
	c.addDir(scratchTmp, 0o777|os.ModeSticky)
	c.addDir(ownedTree+"/data", 0o755)

	c.dockerfile = dockerfileHeader + `COPY ` + rootTree + `/ /
COPY --chown=999:999 ` + ownedTree + `/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["/usr/local/bin/redis-entrypoint"]
CMD ["redis-server"]
`
	return c, nil
}
