package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/postgres"
	"github.com/testcontainers/testcontainers-go/modules/redis"
	"github.com/testcontainers/testcontainers-go/wait"
)

func TestMain(m *testing.M) {
	// No registry: Ryuk's image cannot be pulled, so it must stay off.
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	if _, err := os.Stat("/.dockerenv"); err == nil && os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" {
		// Inside a container that shares the Docker host's network, the
		// published ports are on the loopback address.
		os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
	}
	os.Exit(m.Run())
}

// TestImages builds every image (it skips only when no Docker engine
// answers; missing host packages fail it with the install hint), checks that
// a second run finds them all up to date, and runs each one the way the
// project uses it.
func TestImages(t *testing.T) {
	testcontainers.SkipIfProviderIsNotHealthy(t)
	ctx := context.Background()
	if err := checkDocker(ctx); errors.Is(err, errDockerUnreachable) {
		// testcontainers found an engine, but not the one the docker CLI
		// is pointed at (DOCKER_HOST, the CLI's context).
		t.Skipf("no Docker engine answers the docker CLI: %v", err)
	}

	var out bytes.Buffer
	first, err := Build(ctx, Options{Out: &out})
	t.Logf("first build:\n%s", out.String())
	require.NoError(t, err, "building the images (host packages: %s)", installHint)
	require.Len(t, first, len(images))

	out.Reset()
	second, err := Build(ctx, Options{Out: &out})
	t.Logf("second build:\n%s", out.String())
	require.NoError(t, err)
	require.Len(t, second, len(images))
	for i, r := range second {
		assert.Equal(t, images[i].name, r.Image)
		assert.Equal(t, StatusUpToDate, r.Status, "%s: nothing changed, so no rebuild", r.Image)
		assert.Equal(t, first[i].Hash, r.Hash, "%s: the context hash is stable", r.Image)
		assert.Contains(t, out.String(), r.Image)

		_, labels, ok, err := imageInfo(ctx, r.Image)
		require.NoError(t, err)
		require.True(t, ok, "%s exists", r.Image)
		assert.Equal(t, "true", labels[labelImage], r.Image)
		assert.Equal(t, r.Hash, labels[labelHash], r.Image)
	}
	assert.Equal(t, 4, strings.Count(out.String(), "up to date"), out.String())

	t.Run("contexts", testContexts)
	t.Run("force", func(t *testing.T) {
		rs, err := Build(ctx, Options{Only: []string{"fixture"}, Force: true})
		require.NoError(t, err)
		require.Len(t, rs, 1)
		assert.Equal(t, StatusBuilt, rs[0].Status)
		assert.Equal(t, second[0].Hash, rs[0].Hash)
	})
	t.Run("postgres", testPostgres)
	t.Run("postgres-defaults", testPostgresDefaults)
	t.Run("postgres-refusals", testPostgresRefusals)
	t.Run("redis", testRedis)
	t.Run("toxiproxy", testToxiproxy)
	t.Run("fixture", testFixture)

	// Every container of this test session has been terminated.
	left, err := exec.Command("docker", "ps", "-a", "-q",
		"--filter", "label=org.testcontainers.sessionId="+testcontainers.SessionID()).Output()
	require.NoError(t, err)
	assert.Empty(t, strings.TrimSpace(string(left)), "containers left behind")
}

// testContexts checks what the host-assembled images hold.
func testContexts(t *testing.T) {
	ctx := t.Context()
	bins := map[string]string{"onceproof-entrypoint": "/bin/entrypoint"}

	pg, err := postgresContext(ctx, bins)
	require.NoError(t, err)
	for _, p := range []string{
		pgBinDir + "/postgres", pgBinDir + "/initdb", pgBinDir + "/pg_ctl", pgBinDir + "/psql",
		pgLibDir + "/plpgsql.so", pgShareDir + "/postgres.bki", zoneinfo + "/UTC", localeBin,
		"/lib64/ld-linux-x86-64.so.2", "/usr/local/bin/postgres-entrypoint", "/etc/passwd",
	} {
		assert.Contains(t, pg.entries, clean(rootTree+p), p)
	}
	assert.NotContains(t, pg.entries, clean(rootTree+pgLibDir+"/llvmjit.so"), "no JIT: it needs libLLVM")
	assert.Equal(t, entry{kind: kindSymlink, link: "/usr/local/bin/postgres-entrypoint", mode: 0o777}, pg.entries[rootTree+"/bin/sh"])
	assert.Equal(t, kindDir, pg.entries[ownedTree+"/var/lib/postgresql/data"].kind)
	libc := 0
	for p, e := range pg.entries {
		if strings.HasSuffix(p, "/libc.so.6") || strings.HasSuffix(p, "/libpq.so.5") || strings.HasSuffix(p, "/libicuuc.so.72") {
			libc++
			assert.Equal(t, kindFile, e.kind, "%s is a file, not a link", p)
		}
	}
	assert.GreaterOrEqual(t, libc, 2, "libc and libpq are copied")
	assert.Contains(t, pg.dockerfile, `ENTRYPOINT ["/usr/local/bin/postgres-entrypoint"]`)
	assert.Contains(t, pg.dockerfile, "EXPOSE 5432")
	assert.Contains(t, string(pg.entries[rootTree+"/etc/passwd"].data), "postgres:x:999:999:")

	rd, err := redisContext(ctx, bins)
	require.NoError(t, err)
	assert.Equal(t, redisBin, rd.entries[rootTree+redisBin].src)
	assert.Contains(t, rd.entries, rootTree+"/lib64/ld-linux-x86-64.so.2")
	assert.Contains(t, rd.dockerfile, `ENTRYPOINT ["/usr/local/bin/redis-entrypoint"]`)
	assert.Contains(t, rd.dockerfile, "EXPOSE 6379")
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// pgReady is the wait strategy the project uses: both servers of a first
// start log the line.
func pgReady() testcontainers.CustomizeRequestOption {
	return testcontainers.WithWaitStrategy(
		wait.ForLog("database system is ready to accept connections").
			WithOccurrence(2).WithStartupTimeout(60 * time.Second))
}

const initSQL = `-- An init script with what psql scripts hold.
CREATE TABLE widgets (id serial PRIMARY KEY, name text NOT NULL);
INSERT INTO widgets (name) VALUES ('semi;colon'), ($$dollar's$$);
CREATE FUNCTION widget_count() RETURNS bigint LANGUAGE sql AS $body$
  SELECT count(*) FROM widgets; -- a semicolon inside the body
$body$;
/* CREATE DATABASE cannot run in a multi-statement string: under psql each
   statement is sent alone, and so it is here. */
CREATE DATABASE other;
COPY widgets (name) FROM stdin;
copied one
copied two
\.
SELECT 1;
`

func testPostgres(t *testing.T) {
	ctx := context.Background()
	script := writeFile(t, t.TempDir(), "init.sql", initSQL)
	ctr, err := postgres.Run(ctx, "onceproof/postgres:15",
		postgres.WithDatabase("app"),
		postgres.WithUsername("app"),
		postgres.WithPassword("secret"),
		postgres.WithInitScripts(script),
		pgReady(),
	)
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)

	dsn, err := ctr.ConnectionString(ctx, "sslmode=disable")
	require.NoError(t, err)
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)

	var user, db, fsync string
	require.NoError(t, conn.QueryRow(ctx, "SELECT current_user, current_database(), current_setting('fsync')").Scan(&user, &db, &fsync))
	assert.Equal(t, "app", user)
	assert.Equal(t, "app", db)
	assert.Equal(t, "off", fsync, "the module's command line reaches the server")

	var n int64
	require.NoError(t, conn.QueryRow(ctx, "SELECT widget_count()").Scan(&n))
	assert.EqualValues(t, 4, n, "the init script ran, COPY data included")
	var names []string
	rows, err := conn.Query(ctx, "SELECT name FROM widgets ORDER BY id")
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		names = append(names, s)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"semi;colon", "dollar's", "copied one", "copied two"}, names)
	var other bool
	require.NoError(t, conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'other')").Scan(&other))
	assert.True(t, other, "CREATE DATABASE in an init script")

	// The password is enforced for remote clients.
	bad, err := pgx.ParseConfig(dsn)
	require.NoError(t, err)
	bad.Password = "wrong"
	_, err = pgx.ConnectConfig(ctx, bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "password authentication failed")

	// psql works inside the container, as the module's fallback needs.
	code, r, err := ctr.Exec(ctx, []string{"psql", "-U", "app", "-d", "app", "-tAc", "SELECT count(*) FROM widgets"})
	require.NoError(t, err)
	b, _ := io.ReadAll(r)
	assert.Equal(t, 0, code, string(b))
	assert.Contains(t, string(b), "4")
}

func testPostgresDefaults(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write([]byte("INSERT INTO seq (step) VALUES ('second');\n"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	first := writeFile(t, dir, "b.sql", "CREATE TABLE seq (n serial, step text);\nINSERT INTO seq (step) VALUES ('first');\n")
	second := writeFile(t, dir, "a.sql.gz", gz.String())
	ignored := writeFile(t, dir, "notes.txt", "not a script")

	// The module's defaults (user, password and database "postgres") and
	// its basic wait strategies, whose port check execs /bin/sh -c '...' in
	// the container: the image's /bin/sh refuses that with status 127, which
	// the check takes for "no shell" and accepts.
	ctr, err := postgres.Run(ctx, "onceproof/postgres:15",
		postgres.WithOrderedInitScripts(first, second, ignored),
		postgres.BasicWaitStrategies(),
	)
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)
	dsn, err := ctr.ConnectionString(ctx, "sslmode=disable")
	require.NoError(t, err)
	assert.Contains(t, dsn, "postgres:postgres@")
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var steps string
	require.NoError(t, conn.QueryRow(ctx, "SELECT string_agg(step, ',' ORDER BY n) FROM seq").Scan(&steps))
	assert.Equal(t, "first,second", steps, "scripts run in name order")
	var tz string
	require.NoError(t, conn.QueryRow(ctx, "SELECT now()::timestamptz AT TIME ZONE 'Europe/Paris' IS NOT NULL, current_setting('TimeZone')").Scan(new(bool), &tz))
	assert.Equal(t, "UTC", tz)
}

// testPostgresRefusals: a first start without a password, or with a shell
// init script, exits 1 with a clear message.
func testPostgresRefusals(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		opts []testcontainers.ContainerCustomizer
		want string
	}{
		{"no password", nil, "POSTGRES_PASSWORD is empty"},
		{"shell script", []testcontainers.ContainerCustomizer{
			testcontainers.WithEnv(map[string]string{"POSTGRES_PASSWORD": "secret"}),
			testcontainers.WithFiles(testcontainers.ContainerFile{
				Reader: strings.NewReader("#!/bin/sh\necho hi\n"), ContainerFilePath: "/docker-entrypoint-initdb.d/setup.sh", FileMode: 0o755,
			}),
		}, "shell init scripts are not supported"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := append([]testcontainers.ContainerCustomizer{
				testcontainers.WithWaitStrategy(wait.ForExit().WithExitTimeout(60 * time.Second)),
			}, tc.opts...)
			ctr, err := testcontainers.Run(ctx, "onceproof/postgres:15", opts...)
			testcontainers.CleanupContainer(t, ctr)
			require.NoError(t, err)
			st, err := ctr.State(ctx)
			require.NoError(t, err)
			assert.Equal(t, 1, st.ExitCode)
			rc, err := ctr.Logs(ctx)
			require.NoError(t, err)
			logs, _ := io.ReadAll(rc)
			rc.Close()
			assert.Contains(t, string(logs), tc.want)
		})
	}
}

func testRedis(t *testing.T) {
	ctx := context.Background()
	ctr, err := redis.Run(ctx, "onceproof/redis:7")
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)
	uri, err := ctr.ConnectionString(ctx)
	require.NoError(t, err)
	opts, err := goredis.ParseURL(uri)
	require.NoError(t, err)
	client := goredis.NewClient(opts)
	defer client.Close()
	require.NoError(t, client.Ping(ctx).Err())
	require.NoError(t, client.Set(ctx, "greeting", "hello", 0).Err())
	got, err := client.Get(ctx, "greeting").Result()
	require.NoError(t, err)
	assert.Equal(t, "hello", got)
	mode, err := client.ConfigGet(ctx, "protected-mode").Result()
	require.NoError(t, err)
	assert.Equal(t, "no", mode["protected-mode"])
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func testToxiproxy(t *testing.T) {
	ctx := context.Background()
	ctr, err := testcontainers.Run(ctx, "onceproof/toxiproxy:dev",
		testcontainers.WithExposedPorts("8474/tcp"),
		testcontainers.WithWaitStrategy(wait.ForHTTP("/version").WithPort("8474/tcp").WithStartupTimeout(30*time.Second)),
	)
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)
	base, err := ctr.PortEndpoint(ctx, "8474/tcp", "http")
	require.NoError(t, err)
	root, err := moduleRoot(ctx)
	require.NoError(t, err)
	v, err := goList(ctx, root, "{{.Version}}", toxiproxyModule)
	require.NoError(t, err)
	code, body := httpGet(t, base+"/version")
	assert.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `{"version":"`+strings.TrimPrefix(v, "v")+`"}`, body, "the version go.mod pins")
	code, body = httpGet(t, base+"/proxies")
	assert.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `{}`, body)
}

func testFixture(t *testing.T) {
	ctx := context.Background()
	ctr, err := testcontainers.Run(ctx, "onceproof/fixture:dev",
		testcontainers.WithExposedPorts("8080/tcp"),
		testcontainers.WithWaitStrategy(wait.ForHTTP("/count?marker=x").WithPort("8080/tcp").WithStartupTimeout(30*time.Second)),
	)
	testcontainers.CleanupContainer(t, ctr)
	require.NoError(t, err)
	base, err := ctr.PortEndpoint(ctx, "8080/tcp", "http")
	require.NoError(t, err)
	code, body := httpGet(t, base+"/count?marker=x")
	assert.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `{"count":0}`, body)
}
