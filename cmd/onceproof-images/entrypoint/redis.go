package main

import (
	"bufio"
	"os"
	"strings"
	"syscall"
)

// The Redis image's entrypoint, after the official image's: flags (or a
// *.conf file) as the first argument mean redis-server with those arguments;
// as root it hands /data to the redis user and drops to it; and protected
// mode is off unless asked for, as in the official image (whose redis-server
// is patched to default to `protected-mode no`), so that clients on other
// hosts — the host itself, other containers — can connect without a
// password.

const (
	redisUID, redisGID = 999, 999
	redisDataDir       = "/data"
)

func runRedis(args []string) int {
	args = redisArgs(args, os.ReadFile)
	if args[0] != "redis-server" {
		return execArgs(args)
	}
	if os.Geteuid() == 0 {
		if err := os.MkdirAll(redisDataDir, 0o755); err != nil {
			return failf("%v", err)
		}
		if err := chownTree(redisDataDir, redisUID, redisGID); err != nil {
			return failf("chown %s: %v", redisDataDir, err)
		}
		if err := dropPrivileges(redisUID, redisGID, redisDataDir); err != nil {
			return failf("dropping root privileges for redis: %v", err)
		}
	}
	// Like the official image: a default umask of 022 becomes 077, so the
	// dump and AOF files are private.
	if old := syscall.Umask(0o077); old != 0o022 {
		syscall.Umask(old)
	}
	return execArgs(args)
}

// redisArgs returns the command to run for the container arguments args:
// flags or a config file alone become redis-server's arguments, and
// redis-server gets `--protected-mode no` unless the arguments or the config
// file set protected-mode themselves. Options given later override earlier
// ones, so the flag goes before the user's flags (after a config file).
func redisArgs(args []string, readFile func(string) ([]byte, error)) []string {
	if len(args) == 0 {
		args = []string{"redis-server"}
	}
	if strings.HasPrefix(args[0], "-") || strings.HasSuffix(args[0], ".conf") {
		args = append([]string{"redis-server"}, args...)
	}
	if args[0] != "redis-server" {
		return args
	}
	for _, a := range args[1:] {
		if a == "--protected-mode" {
			return args
		}
	}
	at := 1
	if len(args) > 1 && (args[1] == "-" || !strings.HasPrefix(args[1], "-")) {
		at = 2 // after the config file
		if args[1] != "-" && configSets(args[1], "protected-mode", readFile) {
			return args
		}
	}
	out := append([]string{}, args[:at]...)
	out = append(out, "--protected-mode", "no")
	return append(out, args[at:]...)
}

// configSets reports whether the Redis config file sets the directive.
func configSets(file, directive string, readFile func(string) ([]byte, error)) bool {
	b, err := readFile(file)
	if err != nil {
		return false // redis-server will report the unreadable file itself
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 && strings.EqualFold(f[0], directive) {
			return true
		}
	}
	return false
}
