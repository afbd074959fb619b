package main

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// The PostgreSQL image's entrypoint, after the official image's
// docker-entrypoint.sh: on the first start (an empty PGDATA) it runs initdb
// with POSTGRES_USER and POSTGRES_PASSWORD, opens the server to remote
// connections, starts a temporary server on the Unix socket only, creates
// POSTGRES_DB, runs /docker-entrypoint-initdb.d/*.sql, stops the temporary
// server; then it execs postgres with its arguments. The two servers each
// log "database system is ready to accept connections", which the usual
// wait strategy (that log line, twice) relies on.

const (
	pgUID, pgGID    = 999, 999
	pgHome          = "/var/lib/postgresql"
	defaultPGDATA   = "/var/lib/postgresql/data"
	pgSocketDir     = "/var/run/postgresql"
	initScriptsDir  = "/docker-entrypoint-initdb.d"
	tempServerLimit = 60 * time.Second
)

// pgSettings is the configuration the entrypoint reads from the environment.
type pgSettings struct {
	pgdata     string
	user       string
	password   string
	db         string
	hostAuth   string   // the pg_hba method for remote connections
	initdbArgs []string // POSTGRES_INITDB_ARGS, split on blanks
	waldir     string   // POSTGRES_INITDB_WALDIR
	port       string   // PGPORT, for the temporary server
	socketDir  string
}

// pgSettingsFromEnv reads the official image's variables; each may instead be
// given as NAME_FILE, naming a file that holds the value.
func pgSettingsFromEnv(getenv func(string) string) (pgSettings, error) {
	var firstErr error
	get := func(name, def string) string {
		v, err := fileEnv(getenv, name)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if v == "" {
			return def
		}
		return v
	}
	s := pgSettings{
		pgdata:     get("PGDATA", defaultPGDATA),
		user:       get("POSTGRES_USER", "postgres"),
		password:   get("POSTGRES_PASSWORD", ""),
		initdbArgs: strings.Fields(get("POSTGRES_INITDB_ARGS", "")),
		waldir:     get("POSTGRES_INITDB_WALDIR", ""),
		hostAuth:   get("POSTGRES_HOST_AUTH_METHOD", "scram-sha-256"),
		port:       get("PGPORT", "5432"),
		socketDir:  pgSocketDir,
	}
	s.db = get("POSTGRES_DB", s.user)
	return s, firstErr
}

// fileEnv returns $NAME, or the contents of the file $NAME_FILE names;
// setting both is an error, as in the official image.
func fileEnv(getenv func(string) string, name string) (string, error) {
	v, f := getenv(name), getenv(name+"_FILE")
	if v != "" && f != "" {
		return "", fmt.Errorf("both %s and %s_FILE are set (but are exclusive)", name, name)
	}
	if f == "" {
		return v, nil
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return "", fmt.Errorf("%s_FILE: %w", name, err)
	}
	return strings.TrimRight(string(b), "\n"), nil
}

// verify checks what initialising a new cluster needs, with the official
// image's advice when the password is missing.
func (s pgSettings) verify() error {
	if s.password == "" && s.hostAuth != "trust" {
		return errors.New("the database is not initialised yet and POSTGRES_PASSWORD is empty: " +
			"set POSTGRES_PASSWORD (docker run -e POSTGRES_PASSWORD=...) to the superuser's password, " +
			"or set POSTGRES_HOST_AUTH_METHOD=trust to let every client in without a password (not recommended)")
	}
	if len(s.password) > 100 {
		logf("warning: POSTGRES_PASSWORD is longer than 100 bytes; scram-sha-256 clients may truncate it")
	}
	if s.hostAuth == "trust" {
		logf("warning: POSTGRES_HOST_AUTH_METHOD=trust: every remote connection is accepted without a password")
	}
	return nil
}

// initdbCommandArgs returns initdb's arguments (after the program name); the
// password file is pwfile, or none for an empty password.
func (s pgSettings) initdbCommandArgs(pwfile string) []string {
	args := []string{"-D", s.pgdata, "--username=" + s.user}
	if pwfile != "" {
		args = append(args, "--pwfile="+pwfile)
	}
	if s.waldir != "" {
		args = append(args, "--waldir="+s.waldir)
	}
	has := func(prefixes ...string) bool {
		for _, a := range s.initdbArgs {
			for _, p := range prefixes {
				if strings.HasPrefix(a, p) {
					return true
				}
			}
		}
		return false
	}
	if !has("-E", "--encoding") {
		args = append(args, "--encoding=UTF8")
	}
	if !has("--locale", "--lc-", "--no-locale") {
		args = append(args, "--locale=C")
	}
	if !has("-A", "--auth") {
		args = append(args, "--auth-local=trust", "--auth-host="+s.hostAuth)
	}
	return append(args, s.initdbArgs...)
}

// pgWantsHelp reports whether postgres's arguments only ask for help or
// information, which needs no data directory (as in the official image).
func pgWantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "-?", "--help", "--describe-config", "-V", "--version":
			return true
		}
		if strings.HasPrefix(a, "-C") {
			return true
		}
	}
	return false
}

func runPostgres(args []string) int {
	if len(args) == 0 {
		args = []string{"postgres"}
	}
	if strings.HasPrefix(args[0], "-") {
		args = append([]string{"postgres"}, args...)
	}
	if args[0] != "postgres" || pgWantsHelp(args[1:]) {
		return execArgs(args)
	}
	s, err := pgSettingsFromEnv(os.Getenv)
	if err != nil {
		return failf("%v", err)
	}
	// initdb and postgres read PGDATA; make sure they see the default too.
	if err := os.Setenv("PGDATA", s.pgdata); err != nil {
		return failf("%v", err)
	}
	if os.Geteuid() == 0 {
		if err := preparePostgresDirs(s); err != nil {
			return failf("%v", err)
		}
		if err := dropPrivileges(pgUID, pgGID, pgHome); err != nil {
			return failf("dropping root privileges for postgres: %v", err)
		}
	}
	if st, err := os.Stat(filepath.Join(s.pgdata, "PG_VERSION")); err == nil && st.Size() > 0 {
		logf("PostgreSQL database directory appears to contain a database; skipping initialization")
	} else {
		if err := initializeCluster(s, args[1:]); err != nil {
			return failf("%v", err)
		}
		logf("PostgreSQL init process complete; ready for start up.")
	}
	return execArgs(args)
}

// preparePostgresDirs creates the data, WAL and socket directories and hands
// them to the postgres user; it runs as root.
func preparePostgresDirs(s pgSettings) error {
	for _, d := range []string{s.pgdata, s.waldir} {
		if d == "" {
			continue
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		if err := chownTree(d, pgUID, pgGID); err != nil {
			return err
		}
		if err := os.Chmod(d, 0o700); err != nil {
			logf("warning: chmod 700 %s: %v", d, err)
		}
	}
	if err := os.MkdirAll(s.socketDir, 0o777); err != nil {
		return err
	}
	if err := os.Chown(s.socketDir, pgUID, pgGID); err != nil {
		return err
	}
	if err := os.Chmod(s.socketDir, 0o777|os.ModeSetgid|os.ModeSticky); err != nil {
		return err
	}
	if err := os.MkdirAll("/tmp", 0o777); err != nil {
		return err
	}
	return os.Chmod("/tmp", 0o777|os.ModeSticky)
}

// initializeCluster does the first start's work, as the postgres user.
func initializeCluster(s pgSettings, serverArgs []string) error {
	if err := s.verify(); err != nil {
		return err
	}
	scripts, err := initScripts(initScriptsDir)
	if err != nil {
		return err
	}

	pwfile := ""
	if s.password != "" {
		f, err := os.CreateTemp("", "pwfile")
		if err != nil {
			return err
		}
		pwfile = f.Name()
		defer os.Remove(pwfile)
		_, err = fmt.Fprintln(f, s.password)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	initdb := exec.Command("initdb", s.initdbCommandArgs(pwfile)...)
	initdb.Stdout, initdb.Stderr = os.Stdout, os.Stderr
	if err := initdb.Run(); err != nil {
		return fmt.Errorf("initdb: %w", err)
	}
	if pwfile != "" {
		os.Remove(pwfile)
	}
	if err := openToRemoteConnections(s); err != nil {
		return err
	}

	ctx := context.Background()
	srv, err := startTempServer(ctx, s, serverArgs)
	if err != nil {
		return err
	}
	err = setupDatabase(ctx, s, scripts)
	if stopErr := srv.stop(); err == nil {
		err = stopErr
	}
	return err
}

// openToRemoteConnections makes the server listen on every address and
// accept remote clients with POSTGRES_HOST_AUTH_METHOD (the official image
// edits the sample configuration for the former and pg_hba.conf for the
// latter).
func openToRemoteConnections(s pgSettings) error {
	conf := "\n# Added by the onceproof image entrypoint: listen on all addresses.\nlisten_addresses = '*'\n"
	if err := appendFile(filepath.Join(s.pgdata, "postgresql.conf"), conf); err != nil {
		return err
	}
	hba := "\n# Added by the onceproof image entrypoint: remote clients.\n"
	if s.hostAuth == "trust" {
		hba += "# Warning: trust lets every client in without a password.\n"
	}
	hba += "host all all all " + s.hostAuth + "\n"
	return appendFile(filepath.Join(s.pgdata, "pg_hba.conf"), hba)
}

func appendFile(name, text string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// initScripts lists the init scripts in name order and rejects the kinds
// this image cannot run.
func initScripts(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, filepath.Join(dir, e.Name()))
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.HasSuffix(n, ".sh") {
			return nil, fmt.Errorf("%s: shell init scripts are not supported: this image has no shell (only .sql and .sql.gz scripts run)", n)
		}
		if strings.HasSuffix(n, ".sql.xz") || strings.HasSuffix(n, ".sql.zst") {
			return nil, fmt.Errorf("%s: compressed with xz/zstd, which this image cannot read (use .sql or .sql.gz)", n)
		}
	}
	return names, nil
}

// tempServer is the server that runs while the database is set up.
type tempServer struct {
	cmd  *exec.Cmd
	done chan error
}

// startTempServer starts postgres listening only on its Unix socket, with the
// container's own server arguments (the official image does the same through
// pg_ctl, which needs a shell), and waits until it accepts connections.
func startTempServer(ctx context.Context, s pgSettings, serverArgs []string) (*tempServer, error) {
	args := append(append([]string{}, serverArgs...), "-c", "listen_addresses=", "-p", s.port)
	cmd := exec.Command("postgres", args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	logf("starting a temporary server on the Unix socket only")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the temporary server: %w", err)
	}
	srv := &tempServer{cmd: cmd, done: make(chan error, 1)}
	go func() { srv.done <- cmd.Wait() }()

	deadline := time.Now().Add(tempServerLimit)
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := connectLocal(cctx, s, "postgres")
		cancel()
		if err == nil {
			_ = conn.Close(ctx)
			return srv, nil
		}
		select {
		case werr := <-srv.done:
			return nil, fmt.Errorf("the temporary server exited before it accepted connections: %v", werr)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = srv.stop()
			return nil, fmt.Errorf("the temporary server did not accept connections within %v: %v", tempServerLimit, err)
		}
	}
}

// stop shuts the temporary server down with a fast shutdown (SIGINT), as
// `pg_ctl -m fast -w stop` does.
func (srv *tempServer) stop() error {
	if err := srv.cmd.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stopping the temporary server: %w", err)
	}
	select {
	case err := <-srv.done:
		if err != nil {
			return fmt.Errorf("the temporary server: %w", err)
		}
		return nil
	case <-time.After(tempServerLimit):
		_ = srv.cmd.Process.Signal(syscall.SIGQUIT)
		<-srv.done
		return fmt.Errorf("the temporary server did not stop within %v", tempServerLimit)
	}
}

// connectLocal connects to the temporary server over its Unix socket.
func connectLocal(ctx context.Context, s pgSettings, db string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, err
	}
	cfg.Host = s.socketDir
	port, err := strconv.ParseUint(s.port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("PGPORT %q: %w", s.port, err)
	}
	cfg.Port = uint16(port)
	cfg.User = s.user
	cfg.Password = s.password
	cfg.Database = db
	cfg.TLSConfig = nil
	cfg.Fallbacks = nil
	cfg.RuntimeParams = map[string]string{"application_name": prog}
	return pgx.ConnectConfig(ctx, cfg)
}

// setupDatabase creates POSTGRES_DB unless it exists and runs the init
// scripts in it.
func setupDatabase(ctx context.Context, s pgSettings, scripts []string) error {
	conn, err := connectLocal(ctx, s, "postgres")
	if err != nil {
		return err
	}
	var exists bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", s.db).Scan(&exists)
	if err == nil && !exists {
		logf("creating database %q", s.db)
		_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{s.db}.Sanitize())
	}
	if cerr := conn.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("creating database %q: %w", s.db, err)
	}
	for _, script := range scripts {
		if err := runInitScript(ctx, s, script); err != nil {
			return err
		}
	}
	return nil
}

// runInitScript runs one file of /docker-entrypoint-initdb.d.
func runInitScript(ctx context.Context, s pgSettings, name string) error {
	var src io.Reader
	switch {
	case strings.HasSuffix(name, ".sql"):
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		src = f
	case strings.HasSuffix(name, ".sql.gz"):
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		src = zr
	default:
		logf("ignoring %s", name)
		return nil
	}
	logf("running %s", name)
	text, err := io.ReadAll(src)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	steps, err := splitSQL(string(text))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	conn, err := connectLocal(ctx, s, s.db)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer func() { _ = conn.Close(ctx) }()
	for _, st := range steps {
		switch st.kind {
		case stepConnect:
			_ = conn.Close(ctx)
			conn, err = connectLocal(ctx, s, st.sql)
			if err != nil {
				return fmt.Errorf("%s:%d: \\connect %s: %w", name, st.line, st.sql, err)
			}
			logf("connected to database %q", st.sql)
		case stepCopy:
			tag, err := conn.PgConn().CopyFrom(ctx, strings.NewReader(st.data), st.sql)
			if err != nil {
				return fmt.Errorf("%s:%d: %w", name, st.line, err)
			}
			fmt.Fprintln(os.Stdout, tag.String())
		default:
			results, err := conn.PgConn().Exec(ctx, st.sql).ReadAll()
			if err != nil {
				return fmt.Errorf("%s:%d: %w", name, st.line, err)
			}
			for _, r := range results {
				fmt.Fprintln(os.Stdout, r.CommandTag.String())
			}
		}
	}
	return nil
}
