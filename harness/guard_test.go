package harness_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/harnesstest"
	"github.com/onceproof/onceproof/harness/mcp"
)

func TestGuardResolve(t *testing.T) {
	rec := harnesstest.NewRecorder(map[string]string{
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
			g := rec.Guard()
			g.AllowRemote = tt.allowRemote
			got, err := g.Resolve(tt.hostport)
			if tt.refused == "" {
				require.NoError(t, err, tt.reason)
				assert.Equal(t, tt.want, got, tt.reason)
				return
			}
			require.Error(t, err, tt.reason)
			assert.ErrorIs(t, err, harness.ErrRemoteTarget)
			assert.Contains(t, err.Error(), tt.refused)
			assert.Contains(t, err.Error(), "unless remote targets are explicitly allowed", "a refusal says how to get past it")
		})
	}
	assert.Empty(t, rec.Dialled(), "resolving dials nothing")
}

func TestParseHosts(t *testing.T) {
	table := harness.ParseHosts([]byte("# comment\n127.0.0.1\tlocalhost Box.Local. # trailing\n::1 localhost ip6-localhost\nnot-an-ip name\n10.0.0.9 far\n\n"))
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
	rec := harnesstest.NewRecorder(map[string]string{"tool.local": "127.0.0.1", "far.local": "10.0.0.9"})
	g := rec.Guard()
	ctx := context.Background()

	c, err := g.DialContext(ctx, "tcp", net.JoinHostPort("tool.local", port))
	require.NoError(t, err, "a hosts-table loopback name is dialled")
	c.Close()
	for _, addr := range []string{"10.0.0.1:80", "far.local:80", "example.com:443", "[2001:db8::1]:443"} {
		_, err := g.DialContext(ctx, "tcp", addr)
		require.ErrorIs(t, err, harness.ErrRemoteTarget, addr)
	}
	assert.Equal(t, []string{"127.0.0.1:" + port}, rec.Dialled(), "only the literal loopback address was dialled")
	rec.OnlyLoopbackDials(t)
}

func TestLoopbackOnlyRefusesAtConnectTime(t *testing.T) {
	// The default dialer's Control refuses a non-loopback address even if a
	// caller hands it one directly.
	require.NoError(t, harness.LoopbackOnly("tcp4", "127.0.0.1:80", nil))
	require.NoError(t, harness.LoopbackOnly("tcp6", "[::1]:80", nil))
	err := harness.LoopbackOnly("tcp4", "10.0.0.1:80", nil)
	require.ErrorIs(t, err, harness.ErrRemoteTarget)
	d := &net.Dialer{Control: harness.LoopbackOnly}
	_, err = d.DialContext(context.Background(), "tcp", "192.0.2.1:80")
	require.ErrorIs(t, err, harness.ErrRemoteTarget, "refused before any packet leaves")
}

func TestHTTPOracleRedirectsAreGuarded(t *testing.T) {
	for _, target := range []string{"http://10.0.0.1:9/count", "http://count.example/count", "http://[2001:db8::1]/count"} {
		t.Run(target, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target, http.StatusFound)
			}))
			defer srv.Close()
			rec := harnesstest.NewRecorder(nil)
			o, err := harness.NewHTTPOracle(srv.URL+"/count?m={{.Marker}}", "/count")
			require.NoError(t, err)
			o.Guard = rec.Guard()
			_, err = o.Count(context.Background(), "m-1")
			require.ErrorIs(t, err, harness.ErrRemoteTarget)
			assert.NotErrorIs(t, err, harness.ErrOracleShape)
			assert.Contains(t, err.Error(), "redirect to "+target)
			assert.Equal(t, []string{strings.TrimPrefix(srv.URL, "http://")}, rec.Dialled(), "only the loopback oracle was dialled")
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
	rec := harnesstest.NewRecorder(nil)
	o, err := harness.NewHTTPOracle(srv.URL+"/old?m={{.Marker}}", "/count")
	require.NoError(t, err)
	o.Guard = rec.Guard()
	n, err := o.Count(context.Background(), "m")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Len(t, rec.Dialled(), 2, "one connection per request: no idle connections kept")
	rec.OnlyLoopbackDials(t)
}

func TestOraclesRefuseRemoteAddressesWithoutConnecting(t *testing.T) {
	mk := func(url string) *harness.HTTPOracle {
		o, err := harness.NewHTTPOracle(url, "/n")
		require.NoError(t, err)
		return o
	}
	for _, tc := range []struct {
		reason string
		oracle harness.Oracle
	}{
		{"http oracle at a remote address", mk("http://10.0.0.1:9/{{.Marker}}")},
		{"http oracle at a name outside the hosts table", mk("http://count.example/{{.Marker}}")},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			rec := harnesstest.NewRecorder(nil)
			o := harness.GuardOracle(tc.oracle, rec.Guard())
			defer harness.CloseOracle(o)
			_, err := o.Count(context.Background(), "m-1")
			require.ErrorIs(t, err, harness.ErrRemoteTarget, tc.reason)
			require.ErrorIs(t, err, harness.ErrOracle)
			assert.Empty(t, rec.Dialled(), "no connection was attempted")
		})
	}
}

func TestToolsResolveTheirAddressThroughTheGuard(t *testing.T) {
	oracle := harness.OracleFunc(func(context.Context, string) (int, error) { return 0, nil })
	rec := harnesstest.NewRecorder(map[string]string{"tool.local": "127.0.0.1"})
	tool, err := harness.NewHTTPTool(harness.HTTPConfig{Name: "t", URL: "http://tool.local:8080/x", Body: "{{.Marker}}", Oracle: oracle, Guard: rec.Guard()})
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:8080", tool.Upstream(), "the proxy is given the literal address")
	call, err := tool.Prepare(harness.Operation{ID: "o", Key: "k", Marker: "m"})
	require.NoError(t, err)
	assert.Contains(t, string(call.Wire), "Host: tool.local:8080\r\n", "the request still names the host as written")

	mt, err := mcp.NewMCPTool(mcp.MCPConfig{Name: "m", URL: "http://localhost:9/mcp", Tool: "x", Arguments: `{"m":"{{.Marker}}"}`, KeyArgument: "k", Oracle: oracle, Guard: rec.Guard()})
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:9", mt.Upstream())
	assert.Equal(t, "127.0.0.1:9", mt.Fork().Upstream(), "a fork for overlapping trials reaches the same address")

	for _, url := range []string{"http://10.0.0.1:8080/x", "http://tool.example/x"} {
		_, err = harness.NewHTTPTool(harness.HTTPConfig{Name: "t", URL: url, Body: "{{.Marker}}", Oracle: oracle, Guard: rec.Guard()})
		require.ErrorIs(t, err, harness.ErrRemoteTarget, url)
		_, err = mcp.NewMCPTool(mcp.MCPConfig{Name: "m", URL: url, Tool: "x", Arguments: `{"m":"{{.Marker}}"}`, KeyArgument: "k", Oracle: oracle, Guard: rec.Guard()})
		require.ErrorIs(t, err, harness.ErrRemoteTarget, url)
	}
	_, err = harness.NewHTTPTool(harness.HTTPConfig{Name: "t", URL: "http://10.0.0.1:8080/x", Body: "{{.Marker}}", Oracle: oracle})
	require.ErrorIs(t, err, harness.ErrRemoteTarget, "without a guard: loopback only")
	tool, err = harness.NewHTTPTool(harness.HTTPConfig{Name: "t", URL: "http://tool.example:8080/x", Body: "{{.Marker}}", Oracle: oracle, Guard: &harness.Guard{AllowRemote: true}})
	require.NoError(t, err)
	assert.Equal(t, "tool.example:8080", tool.Upstream(), "allowed remote names are left to the resolver")
	assert.Empty(t, rec.Dialled())
}
