// Command onceproof-entrypoint is the ENTRYPOINT of the locally built
// onceproof/postgres and onceproof/redis images (see the parent command,
// onceproof-images). Those images are FROM scratch: they hold the host's
// PostgreSQL and Redis binaries and their shared libraries, and no shell, so
// this static Go binary does what the official images' docker-entrypoint.sh
// scripts do.
//
// It picks its role from the name it was started under:
//
//	postgres-entrypoint  the PostgreSQL image's entrypoint (see postgres.go)
//	redis-entrypoint     the Redis image's entrypoint (see redis.go)
//	sh                   /bin/sh in the PostgreSQL image: runs only the
//	                     single simple commands that initdb and pg_ctl pass
//	                     to popen(3) and system(3) (see shell.go)
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// prog prefixes the entrypoint's own log lines.
const prog = "onceproof-entrypoint"

func main() {
	os.Exit(dispatch(filepath.Base(os.Args[0]), os.Args[1:]))
}

// dispatch runs the role named by the base name of argv[0] and returns the
// exit status (the roles that succeed normally replace the process with
// syscall.Exec and never return).
func dispatch(name string, args []string) int {
	switch name {
	case "sh":
		return runShell(args)
	case "postgres-entrypoint":
		return runPostgres(args)
	case "redis-entrypoint":
		return runRedis(args)
	default:
		fmt.Fprintf(os.Stderr, "%s: started as %q; expected postgres-entrypoint, redis-entrypoint or sh\n", prog, name)
		return 2
	}
}

// logf prints one line of the entrypoint's own progress to stdout, where the
// official images' entrypoints print theirs.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stdout, prog+": "+format+"\n", args...)
}

// failf prints an error to stderr and returns exit status 1.
func failf(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, prog+": error: "+format+"\n", args...)
	return 1
}

// execArgs replaces the process with args[0] (looked up in PATH unless it
// holds a slash), passing args as its argv and the current environment. It
// returns only on failure, with the exit status a shell would use.
func execArgs(args []string) int {
	path, err := lookPath(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %s: %v\n", prog, args[0], err)
		return 127
	}
	err = syscall.Exec(path, args, os.Environ())
	fmt.Fprintf(os.Stderr, "%s: exec %s: %v\n", prog, path, err)
	return 126
}

// lookPath finds an executable like exec.LookPath but without its refusal of
// relative results, which does not matter here.
func lookPath(name string) (string, error) {
	if filepath.Base(name) != name {
		return name, nil
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("not found in PATH %q", os.Getenv("PATH"))
}

// dropPrivileges switches the whole process (every thread, as Go's syscall
// package does since Go 1.16) to uid:gid with no supplementary groups, and
// points HOME at home.
func dropPrivileges(uid, gid int, home string) error {
	if err := syscall.Setgroups([]int{gid}); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(gid); err != nil {
		return fmt.Errorf("setgid %d: %w", gid, err)
	}
	if err := syscall.Setuid(uid); err != nil {
		return fmt.Errorf("setuid %d: %w", uid, err)
	}
	return os.Setenv("HOME", home)
}

// chownTree gives every file under root that uid:gid do not own yet to them,
// like the official images' `find ... \! -user postgres -exec chown`.
func chownTree(root string, uid, gid int) error {
	return filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid && int(st.Gid) == gid {
			return nil
		}
		return os.Lchown(path, uid, gid)
	})
}
