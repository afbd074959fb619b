package harness

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeResolver replaces the resolver for the duration of a test, so that no
// test ever reaches a DNS server.
func fakeResolver(t *testing.T, names map[string][]string) {
	t.Helper()
	old := lookupNetIP
	t.Cleanup(func() { lookupNetIP = old })
	lookupNetIP = func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		addrs, ok := names[host]
		if !ok {
			return nil, errors.New("lookup " + host + ": no such host")
		}
		var out []netip.Addr
		for _, a := range addrs {
			out = append(out, netip.MustParseAddr(a))
		}
		return out, nil
	}
}

func TestCheckTarget(t *testing.T) {
	fakeResolver(t, map[string][]string{
		"db.local":    {"127.0.0.1", "::1"},
		"mixed.local": {"127.0.0.1", "10.0.0.7"},
		"none.local":  {},
	})
	tests := []struct {
		reason      string
		hostport    string
		allowRemote bool
		// refused is part of the error message; "" means allowed.
		refused string
	}{
		{"IPv4 loopback", "127.0.0.1:8080", false, ""},
		{"all of 127.0.0.0/8 is loopback", "127.3.4.5:80", false, ""},
		{"IPv6 loopback", "[::1]:8080", false, ""},
		{"IPv4-mapped loopback", "[::ffff:127.0.0.1]:80", false, ""},
		{"localhost is allowed without resolving", "localhost:8080", false, ""},
		{"localhost in any case, with a root dot", "LocalHost.:8080", false, ""},
		{"a bare host without a port", "127.0.0.1", false, ""},
		{"a bare IPv6 host", "::1", false, ""},
		{"a name resolving only to loopback", "db.local:5432", false, ""},
		{"a private address is remote", "10.0.0.1:8080", false, "remote target 10.0.0.1:8080: 10.0.0.1 is not a loopback address"},
		{"a public IPv6 address is remote", "[2001:db8::1]:443", false, "2001:db8::1 is not a loopback address"},
		{"the unspecified address is refused with a hint", "0.0.0.0:8080", false, "use 127.0.0.1 or ::1"},
		{"a missing host is refused", ":8080", false, "no host"},
		{"a name with one remote address is refused", "mixed.local:80", false, "mixed.local resolves to 10.0.0.7, which is not loopback"},
		{"a name resolving to nothing is refused", "none.local:80", false, "resolves to no address"},
		{"a name that does not resolve is refused", "example.com:443", false, "cannot resolve example.com to check that it is loopback: lookup example.com: no such host"},
		{"allowRemote permits a remote address", "10.0.0.1:8080", true, ""},
		{"allowRemote permits an unresolvable name", "example.com:443", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			err := CheckTarget(context.Background(), tt.hostport, tt.allowRemote)
			if tt.refused == "" {
				assert.NoError(t, err, tt.reason)
				return
			}
			require.Error(t, err, tt.reason)
			assert.ErrorIs(t, err, ErrRemoteTarget)
			assert.NotErrorIs(t, err, ErrSpec)
			assert.Contains(t, err.Error(), tt.refused)
			assert.Contains(t, err.Error(), "unless remote targets are explicitly allowed", "a refusal says how to get past it")
		})
	}
}

func TestCheckTargetsLocatesRefusals(t *testing.T) {
	fakeResolver(t, nil)
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
`
	s, err := ParseSpec("tools.yaml", []byte(text))
	require.NoError(t, err)
	ctx := context.Background()

	assert.NoError(t, s.Tools[0].CheckTargets(ctx, "tools.yaml", false), "loopback tool and oracle")
	assert.NoError(t, s.Tools[2].CheckTargets(ctx, "tools.yaml", false), "a command oracle has no address")

	err = s.Tools[1].CheckTargets(ctx, "tools.yaml", false)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrRemoteTarget)
	assert.NotErrorIs(t, err, ErrSpec, "a remote target is not a spec error")
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 2, err.Error())
	assert.True(t, strings.HasPrefix(lines[0], "tools.yaml:12: tools[1].http.url: remote target 10.0.0.1:8080: 10.0.0.1 is not a loopback address"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "tools.yaml:17: tools[1].oracle.http.url: remote target onceproof-target-check.example.com:80: cannot resolve"), lines[1])
	var se *SpecError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 12, se.Line)
	assert.Equal(t, "tools[1].http.url", se.Field)

	assert.NoError(t, s.Tools[1].CheckTargets(ctx, "tools.yaml", true), "allowRemote permits both")
}

func TestCheckTargetsOfAHandBuiltToolSpec(t *testing.T) {
	o, err := NewHTTPOracle("http://10.0.0.2:9/count/{{.Marker}}", "/n")
	require.NoError(t, err)
	ts := ToolSpec{Name: "lib", HTTP: HTTPConfig{Name: "lib", URL: "http://127.0.0.1:1/x", Oracle: Settled(o, 0)}}
	err = ts.CheckTargets(context.Background(), "", false)
	require.ErrorIs(t, err, ErrRemoteTarget)
	assert.Equal(t, "oracle.http.url: remote target 10.0.0.2:9: 10.0.0.2 is not a loopback address ("+remoteHint+")", err.Error())
}
