package harness

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a guard's hosts table and dialer for tests: it records every
// name looked up and every address dialled, and dials for real (loopback
// only ever reaches it).
type recorder struct {
	mu      sync.Mutex
	lookups []string
	dials   []string
	table   map[string][]netip.Addr
}

func newRecorder(table map[string]string) *recorder {
	r := &recorder{table: map[string][]netip.Addr{}}
	for name, addrs := range table {
		for _, a := range strings.Fields(addrs) {
			r.table[name] = append(r.table[name], netip.MustParseAddr(a))
		}
	}
	return r
}

func (r *recorder) guard() *Guard {
	return &Guard{
		Hosts: func(name string) []netip.Addr {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.lookups = append(r.lookups, name)
			return r.table[name]
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			r.mu.Lock()
			r.dials = append(r.dials, addr)
			r.mu.Unlock()
			return (&net.Dialer{Control: loopbackOnly}).DialContext(ctx, network, addr)
		},
	}
}

// onlyLoopbackDials fails unless every dialled address is a literal
// loopback address: no name ever reached a resolver, no connection left the
// machine.
func (r *recorder) onlyLoopbackDials(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.dials {
		ap, err := netip.ParseAddrPort(d)
		require.NoError(t, err, "dialled %q: not a literal address", d)
		require.True(t, ap.Addr().Unmap().IsLoopback(), "dialled %s", d)
	}
}

func (r *recorder) dialled() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.dials...)
}

func TestGuardResolve(t *testing.T) {
	rec := newRecorder(map[string]string{
		"db.local":    "127.0.0.1 ::1",
		"v6.local":    "::1",
		"mixed.local": "127.0.0.1 10.0.0.7",
		"localhost":   "127.0.0.1 ::1",
	})
	tests := []struct {
		reason      string
		hostport    string
		allowRemote bool
		// want is the resolved address; refused, when set, is part of the
		// error instead.
		want    string
		refused string
	}{
		{reason: "IPv4 loopback", hostport: "127.0.0.1:8080", want: "127.0.0.1:8080"},
		{reason: "all of 127.0.0.0/8 is loopback", hostport: "127.3.4.5:80", want: "127.3.4.5:80"},
		{reason: "IPv6 loopback", hostport: "[::1]:8080", want: "[::1]:8080"},
		{reason: "IPv4-mapped loopback", hostport: "[::ffff:127.0.0.1]:80", want: "[::ffff:127.0.0.1]:80"},
		{reason: "localhost is its hosts-table address", hostport: "localhost:8080", want: "127.0.0.1:8080"},
		{reason: "localhost in any case, with a root dot", hostport: "LocalHost.:8080", want: "127.0.0.1:8080"},
		{reason: "a name under .localhost is loopback (RFC 6761)", hostport: "api.localhost:9", want: "127.0.0.1:9"},
		{reason: "a bare host without a port", hostport: "127.0.0.1", want: "127.0.0.1"},
		{reason: "a bare IPv6 host", hostport: "::1", want: "::1"},
		{reason: "a hosts-table name mapping only to loopback", hostport: "db.local:5432", want: "127.0.0.1:5432"},
		{reason: "an IPv6 hosts-table name", hostport: "v6.local:1", want: "[::1]:1"},
		{reason: "a private address is remote", hostport: "10.0.0.1:8080", refused: "remote target 10.0.0.1:8080: 10.0.0.1 is not a loopback address"},
		{reason: "a public IPv6 address is remote", hostport: "[2001:db8::1]:443", refused: "2001:db8::1 is not a loopback address"},
		{reason: "the unspecified address is refused with a hint", hostport: "0.0.0.0:8080", refused: "use 127.0.0.1 or ::1"},
		{reason: "a missing host is refused", hostport: ":8080", refused: "no host"},
		{reason: "a hosts-table name with one remote address is refused", hostport: "mixed.local:80", refused: "maps mixed.local to 10.0.0.7, which is not loopback"},
		{reason: "a name the hosts table does not know is refused without asking DNS", hostport: "example.com:443", refused: "example.com is not a loopback name"},
		{reason: "allowRemote permits a remote address", hostport: "10.0.0.1:8080", allowRemote: true, want: "10.0.0.1:8080"},
		{reason: "allowRemote permits any name, unresolved", hostport: "example.com:443", allowRemote: true, want: "example.com:443"},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			g := rec.guard()
			g.AllowRemote = tt.allowRemote
			got, err := g.Resolve(tt.hostport)
			if tt.refused == "" {
				require.NoError(t, err, tt.reason)
				assert.Equal(t, tt.want, got, tt.reason)
				return
			}
			require.Error(t, err, tt.reason)
			assert.ErrorIs(t, err, ErrRemoteTarget)
			assert.NotErrorIs(t, err, ErrSpec)
			assert.Contains(t, err.Error(), tt.refused)
			assert.Contains(t, err.Error(), "unless remote targets are explicitly allowed", "a refusal says how to get past it")
		})
	}
	assert.Empty(t, rec.dialled(), "resolving dials nothing")
}

func TestParseHosts(t *testing.T) {
	table := ParseHosts([]byte("# comment\n127.0.0.1\tlocalhost Box.Local. # trailing\n::1 localhost ip6-localhost\nnot-an-ip name\n10.0.0.9 far\n\n"))
	assert.Equal(t, []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}, table["localhost"])
	assert.Equal(t, []netip.Addr{netip.MustParseAddr("127.0.0.1")}, table["box.local"], "names are lowercased, root dot dropped")
	assert.Equal(t, []netip.Addr{netip.MustParseAddr("10.0.0.9")}, table["far"])
	assert.NotContains(t, table, "name", "a line without an address is skipped")
}

func TestGuardDialsOnlyLiteralLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	rec := newRecorder(map[string]string{"tool.local": "127.0.0.1", "far.local": "10.0.0.9"})
	g := rec.guard()
	ctx := context.Background()

	c, err := g.DialContext(ctx, "tcp", net.JoinHostPort("tool.local", port))
	require.NoError(t, err, "a hosts-table loopback name is dialled")
	c.Close()
	for _, addr := range []string{"10.0.0.1:80", "far.local:80", "example.com:443", "[2001:db8::1]:443"} {
		_, err := g.DialContext(ctx, "tcp", addr)
		require.ErrorIs(t, err, ErrRemoteTarget, addr)
	}
	assert.Equal(t, []string{"127.0.0.1:" + port}, rec.dialled(), "only the literal loopback address was dialled")
	rec.onlyLoopbackDials(t)
}

func TestLoopbackOnlyRefusesAtConnectTime(t *testing.T) {
	// The default dialer's Control refuses a non-loopback address even if a
	// caller hands it one directly.
	require.NoError(t, loopbackOnly("tcp4", "127.0.0.1:80", nil))
	require.NoError(t, loopbackOnly("tcp6", "[::1]:80", nil))
	err := loopbackOnly("tcp4", "10.0.0.1:80", nil)
	require.ErrorIs(t, err, ErrRemoteTarget)
	d := &net.Dialer{Control: loopbackOnly}
	_, err = d.DialContext(context.Background(), "tcp", "192.0.2.1:80")
	require.ErrorIs(t, err, ErrRemoteTarget, "refused before any packet leaves")
}

func TestHTTPOracleRedirectsAreGuarded(t *testing.T) {
	for _, target := range []string{"http://10.0.0.1:9/count", "http://count.example/count", "http://[2001:db8::1]/count"} {
		t.Run(target, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target, http.StatusFound)
			}))
			defer srv.Close()
			rec := newRecorder(nil)
			o, err := NewHTTPOracle(srv.URL+"/count?m={{.Marker}}", "/count")
			require.NoError(t, err)
			o.Guard = rec.guard()
			_, err = o.Count(context.Background(), "m-1")
			require.ErrorIs(t, err, ErrRemoteTarget)
			assert.NotErrorIs(t, err, ErrOracleShape)
			assert.Contains(t, err.Error(), "redirect to "+target)
			assert.Equal(t, []string{strings.TrimPrefix(srv.URL, "http://")}, rec.dialled(), "only the loopback oracle was dialled")
		})
	}
}

func TestHTTPOracleFollowsLoopbackRedirects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new?"+r.URL.RawQuery, http.StatusFound)
			return
		}
		_, _ = w.Write([]byte(`{"count":2}`))
	}))
	defer srv.Close()
	rec := newRecorder(nil)
	o, err := NewHTTPOracle(srv.URL+"/old?m={{.Marker}}", "/count")
	require.NoError(t, err)
	o.Guard = rec.guard()
	n, err := o.Count(context.Background(), "m")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Len(t, rec.dialled(), 2, "one connection per request: no idle connections kept")
	rec.onlyLoopbackDials(t)
}

func TestOraclesRefuseRemoteAddressesWithoutConnecting(t *testing.T) {
	mk := func(url string) *HTTPOracle {
		o, err := NewHTTPOracle(url, "/n")
		require.NoError(t, err)
		return o
	}
	for _, tc := range []struct {
		reason string
		oracle Oracle
	}{
		{"http oracle at a remote address", mk("http://10.0.0.1:9/{{.Marker}}")},
		{"http oracle at a name outside the hosts table", mk("http://count.example/{{.Marker}}")},
		{"sql oracle at a remote address", &SQLOracle{DSN: "postgres://u:p@10.0.0.1:5432/db", Query: "select $1::int"}},
		{"sql oracle at a name outside the hosts table", &SQLOracle{DSN: "postgres://u:p@db.example/db", Query: "select $1::int"}},
		{"redis oracle at a remote address", &RedisOracle{URL: "redis://10.0.0.1:6379/0", Command: []*Template{MustTemplate("SCARD"), MustTemplate("{{.Marker}}")}}},
		{"redis oracle at a name outside the hosts table", &RedisOracle{URL: "redis://cache.example/0", Command: []*Template{MustTemplate("SCARD"), MustTemplate("{{.Marker}}")}}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			rec := newRecorder(nil)
			o := GuardOracle(tc.oracle, rec.guard())
			defer closeOracle(o)
			_, err := o.Count(context.Background(), "m-1")
			require.ErrorIs(t, err, ErrRemoteTarget, tc.reason)
			require.ErrorIs(t, err, ErrOracle)
			assert.Empty(t, rec.dialled(), "no connection was attempted")
		})
	}
}

func TestStoreOraclesDialThroughTheGuard(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close() // not a database: the query fails after the dial
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for _, o := range []Oracle{
		&SQLOracle{DSN: "postgres://u:p@store.local:" + port + "/db?sslmode=disable", Query: "select $1::int"},
		&RedisOracle{URL: "redis://store.local:" + port + "/0", Command: []*Template{MustTemplate("SCARD"), MustTemplate("{{.Marker}}")}},
	} {
		rec := newRecorder(map[string]string{"store.local": "127.0.0.1"})
		g := GuardOracle(o, rec.guard())
		_, err := g.Count(context.Background(), "m")
		closeOracle(g)
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrRemoteTarget)
		require.NotEmpty(t, rec.dialled(), "%s dialled through the guard", o)
		assert.Equal(t, "127.0.0.1:"+port, rec.dialled()[0], "the hosts-table name was dialled as its literal address")
		rec.onlyLoopbackDials(t)
	}
}

func TestToolsResolveTheirAddressThroughTheGuard(t *testing.T) {
	oracle := OracleFunc(func(context.Context, string) (int, error) { return 0, nil })
	rec := newRecorder(map[string]string{"tool.local": "127.0.0.1"})
	tool, err := NewHTTPTool(HTTPConfig{Name: "t", URL: "http://tool.local:8080/x", Body: "{{.Marker}}", Oracle: oracle, Guard: rec.guard()})
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:8080", tool.Upstream(), "the proxy is given the literal address")
	call, err := tool.Prepare(Operation{ID: "o", Key: "k", Marker: "m"})
	require.NoError(t, err)
	assert.Contains(t, string(call.Wire), "Host: tool.local:8080\r\n", "the request still names the host as written")

	mcp, err := NewMCPTool(MCPConfig{Name: "m", URL: "http://localhost:9/mcp", Tool: "x", Arguments: `{"m":"{{.Marker}}"}`, KeyArgument: "k", Oracle: oracle, Guard: rec.guard()})
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:9", mcp.Upstream())
	assert.Equal(t, "127.0.0.1:9", mcp.Fork().Upstream(), "a fork for overlapping trials reaches the same address")

	for _, url := range []string{"http://10.0.0.1:8080/x", "http://tool.example/x"} {
		_, err = NewHTTPTool(HTTPConfig{Name: "t", URL: url, Body: "{{.Marker}}", Oracle: oracle, Guard: rec.guard()})
		require.ErrorIs(t, err, ErrRemoteTarget, url)
		_, err = NewMCPTool(MCPConfig{Name: "m", URL: url, Tool: "x", Arguments: `{"m":"{{.Marker}}"}`, KeyArgument: "k", Oracle: oracle, Guard: rec.guard()})
		require.ErrorIs(t, err, ErrRemoteTarget, url)
	}
	_, err = NewHTTPTool(HTTPConfig{Name: "t", URL: "http://10.0.0.1:8080/x", Body: "{{.Marker}}", Oracle: oracle})
	require.ErrorIs(t, err, ErrRemoteTarget, "without a guard: loopback only")
	tool, err = NewHTTPTool(HTTPConfig{Name: "t", URL: "http://tool.example:8080/x", Body: "{{.Marker}}", Oracle: oracle, Guard: &Guard{AllowRemote: true}})
	require.NoError(t, err)
	assert.Equal(t, "tool.example:8080", tool.Upstream(), "allowed remote names are left to the resolver")
	assert.Empty(t, rec.dialled())
}

func TestCheckTargetsLocatesRefusals(t *testing.T) {
	const text = `version: 1
tools:
  - name: local
    http:
      url: http://127.0.0.1:8080/tickets
      body: '{{.Marker}}'
    oracle:
      http: {url: "http://localhost:8080/count?marker={{.Marker}}", count: /count}
      settle: 10ms
  - name: remote
    http:
      url: http://10.0.0.1:8080/tickets
      body: '{{.Marker}}'
    oracle:
      settle: 10ms
      http:
        url: "http://{{.Marker}}.example.com/count"
        count: /count
  - name: command
    http:
      url: http://[::1]:8080/tickets
      body: '{{.Marker}}'
    oracle:
      command: [echo, "0"]
  - name: store
    http:
      url: http://127.0.0.1:8080/tickets
      body: '{{.Marker}}'
    oracle:
      sql: {dsn: "postgres://u:p@db.example/app", query: "select count(*) from t where s = $1"}
`
	s, err := ParseSpec("tools.yaml", []byte(text))
	require.NoError(t, err)
	rec := newRecorder(nil)
	g := rec.guard()

	assert.NoError(t, s.Tools[0].CheckTargets(g, "tools.yaml"), "loopback tool and oracle")
	assert.NoError(t, s.Tools[2].CheckTargets(g, "tools.yaml"), "a command oracle has no address")

	err = s.Tools[1].CheckTargets(g, "tools.yaml")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrRemoteTarget)
	assert.NotErrorIs(t, err, ErrSpec, "a remote target is not a spec error")
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 2, err.Error())
	assert.True(t, strings.HasPrefix(lines[0], "tools.yaml:12: tools[1].http.url: remote target 10.0.0.1:8080: 10.0.0.1 is not a loopback address"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "tools.yaml:17: tools[1].oracle.http.url: remote target onceproof-target-check.example.com:80: onceproof-target-check.example.com is not a loopback name"), lines[1])
	var se *SpecError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 12, se.Line)
	assert.Equal(t, "tools[1].http.url", se.Field)

	err = s.Tools[3].CheckTargets(g, "tools.yaml")
	require.ErrorIs(t, err, ErrRemoteTarget)
	assert.Contains(t, err.Error(), "tools.yaml:30: tools[3].oracle.sql.dsn: remote target db.example:5432")

	assert.NoError(t, s.Tools[1].CheckTargets(&Guard{AllowRemote: true}, "tools.yaml"), "allowRemote permits both")
	assert.Empty(t, rec.dialled(), "checking dials nothing")
}

func TestCheckTargetsOfAHandBuiltToolSpec(t *testing.T) {
	o, err := NewHTTPOracle("http://10.0.0.2:9/count/{{.Marker}}", "/n")
	require.NoError(t, err)
	ts := ToolSpec{Name: "lib", HTTP: HTTPConfig{Name: "lib", URL: "http://127.0.0.1:1/x", Oracle: Settled(o, 0)}}
	err = ts.CheckTargets(nil, "")
	require.ErrorIs(t, err, ErrRemoteTarget)
	assert.Equal(t, "oracle.http.url: remote target 10.0.0.2:9: 10.0.0.2 is not a loopback address ("+remoteHint+")", err.Error())
}

func TestWithGuardReachesToolAndOracle(t *testing.T) {
	s, err := ParseSpec("tools.yaml", []byte(`version: 1
tools:
  - name: t
    http: {url: "http://far.local:8080/x", body: "{{.Marker}}"}
    oracle:
      http: {url: "http://far.local:8080/count/{{.Marker}}", count: /n}
      settle: 5ms
`))
	require.NoError(t, err, "parsing never refuses an address: the run decides")
	rec := newRecorder(map[string]string{"far.local": "10.0.0.9"})
	ts := s.Tools[0].WithGuard(rec.guard())
	_, err = ts.Tool()
	require.ErrorIs(t, err, ErrRemoteTarget)
	var se *SpecError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "tools[0].http.url", se.Field)
	_, err = ts.HTTP.Oracle.Count(context.Background(), "m")
	require.ErrorIs(t, err, ErrRemoteTarget)
	assert.Empty(t, rec.dialled())
	assert.False(t, errors.Is(err, ErrSpec))
}
