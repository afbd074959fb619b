package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// Host packages the Postgres and Redis images are assembled from.
const (
	pgVersion  = "15"
	pgBinDir   = "/usr/lib/postgresql/" + pgVersion + "/bin"
	pgLibDir   = "/usr/lib/postgresql/" + pgVersion + "/lib"
	pgShareDir = "/usr/share/postgresql/" + pgVersion
	zoneinfo   = "/usr/share/zoneinfo"
	redisBin   = "/usr/bin/redis-server"
	localeBin  = "/usr/bin/locale"
	localeDir  = "/usr/lib/locale"

	// installHint is the one command that installs both services.
	installHint = "apt-get install postgresql-15 redis-server"
)

// missingHostError says which host package an image needs.
type missingHostError struct {
	path    string // the missing file or directory
	pkg     string // the Debian package that provides it
	purpose string
}

func (e *missingHostError) Error() string {
	return fmt.Sprintf("%s is not installed on this host (%s is missing; it comes from the Debian package %s): run `%s`",
		e.purpose, e.path, e.pkg, hintFor(e.pkg))
}

func hintFor(pkg string) string {
	switch pkg {
	case "postgresql-15", "redis-server":
		return installHint
	}
	return "apt-get install " + pkg
}

// requireHost checks that path exists, naming pkg when it does not.
func requireHost(path, pkg, purpose string) error {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return &missingHostError{path: path, pkg: pkg, purpose: purpose}
		}
		return err
	}
	return nil
}

// isELF reports whether the file starts with the ELF magic number.
func isELF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return false
	}
	return string(magic[:]) == "\x7fELF"
}

// sharedLibraries runs ldd on the ELF files and returns every library path
// they load, the dynamic loader included, sorted and without duplicates.
func sharedLibraries(ctx context.Context, files []string) ([]string, error) {
	if len(files) == 0 {
		return nil, nil
	}
	ldd, err := exec.LookPath("ldd")
	if err != nil {
		return nil, &missingHostError{path: "ldd", pkg: "libc-bin", purpose: "ldd(1)"}
	}
	// One ldd run for all files: with several arguments it prints "FILE:"
	// before each file's libraries. It exits non-zero when any file is not
	// dynamic, which is fine: such files need no libraries.
	args := append([]string{}, files...)
	if len(files) == 1 {
		args = append(args, "/dev/null") // keep the "FILE:" headers
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, ldd, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	libs, err := parseLdd(stdout.String())
	if err != nil {
		return nil, err
	}
	if len(libs) == 0 && runErr != nil {
		return nil, fmt.Errorf("ldd: %v: %s", runErr, strings.TrimSpace(stderr.String()))
	}
	return libs, nil
}

// parseLdd extracts library paths from ldd's output; a library ldd could not
// find is an error.
func parseLdd(out string) ([]string, error) {
	seen := map[string]bool{}
	file := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "\t") && strings.HasSuffix(line, ":") {
			file = strings.TrimSuffix(line, ":")
			continue
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.Contains(line, "not a dynamic executable") || strings.Contains(line, "statically linked"):
			continue
		case strings.Contains(line, "=> not found"):
			return nil, fmt.Errorf("ldd %s: library %s not found on this host", file, strings.Fields(line)[0])
		}
		var lib string
		if i := strings.Index(line, "=>"); i >= 0 {
			rest := strings.TrimSpace(line[i+2:])
			lib = strings.Fields(rest + " ")[0]
		} else {
			lib = strings.Fields(line)[0] // the loader: "/lib64/ld-linux-x86-64.so.2 (0x...)"
		}
		if strings.HasPrefix(lib, "/") {
			seen[lib] = true
		}
	}
	libs := make([]string, 0, len(seen))
	for l := range seen {
		libs = append(libs, l)
	}
	sort.Strings(libs)
	return libs, nil
}
