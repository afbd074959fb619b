package spec

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/container"
	"github.com/onceproof/onceproof/harness/harnesstest"
)

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
	s, err := Parse("tools.yaml", []byte(text))
	require.NoError(t, err)
	rec := harnesstest.NewRecorder(nil)
	g := rec.Guard()

	assert.NoError(t, s.Tools[0].CheckTargets(g, "tools.yaml"), "loopback tool and oracle")
	assert.NoError(t, s.Tools[2].CheckTargets(g, "tools.yaml"), "a command oracle has no address")

	err = s.Tools[1].CheckTargets(g, "tools.yaml")
	require.Error(t, err)
	assert.ErrorIs(t, err, harness.ErrRemoteTarget)
	assert.NotErrorIs(t, err, ErrSpec, "a remote target is not a spec error")
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 2, err.Error())
	assert.True(t, strings.HasPrefix(lines[0], "tools.yaml:12: tools[1].http.url: remote target 10.0.0.1:8080: 10.0.0.1 is not a loopback address"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "tools.yaml:17: tools[1].oracle.http.url: remote target onceproof-target-check.example.com:80: onceproof-target-check.example.com is not a loopback name"), lines[1])
	var se *Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 12, se.Line)
	assert.Equal(t, "tools[1].http.url", se.Field)

	err = s.Tools[3].CheckTargets(g, "tools.yaml")
	require.ErrorIs(t, err, harness.ErrRemoteTarget)
	assert.Contains(t, err.Error(), "tools.yaml:30: tools[3].oracle.sql.dsn: remote target db.example:5432")

	assert.NoError(t, s.Tools[1].CheckTargets(&harness.Guard{AllowRemote: true}, "tools.yaml"), "allowRemote permits both")
	assert.Empty(t, rec.Dialled(), "checking dials nothing")
}

func TestCheckTargetsOfAHandBuiltToolSpec(t *testing.T) {
	o, err := harness.NewHTTPOracle("http://10.0.0.2:9/count/{{.Marker}}", "/n")
	require.NoError(t, err)
	ts := Tool{Name: "lib", HTTP: harness.HTTPConfig{Name: "lib", URL: "http://127.0.0.1:1/x", Oracle: harness.Settled(o, 0)}}
	err = ts.CheckTargets(nil, "")
	require.ErrorIs(t, err, harness.ErrRemoteTarget)
	assert.Equal(t, "oracle.http.url: remote target 10.0.0.2:9: 10.0.0.2 is not a loopback address (onceproof duplicates writes on purpose, so it only targets loopback unless remote targets are explicitly allowed)", err.Error())
}

func TestWithGuardReachesToolAndOracle(t *testing.T) {
	s, err := Parse("tools.yaml", []byte(`version: 1
tools:
  - name: t
    http: {url: "http://far.local:8080/x", body: "{{.Marker}}"}
    oracle:
      http: {url: "http://far.local:8080/count/{{.Marker}}", count: /n}
      settle: 5ms
`))
	require.NoError(t, err, "parsing never refuses an address: the run decides")
	rec := harnesstest.NewRecorder(map[string]string{"far.local": "10.0.0.9"})
	ts := s.Tools[0].WithGuard(rec.Guard())
	err = ts.Check()
	require.ErrorIs(t, err, harness.ErrRemoteTarget)
	var se *Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "tools[0].http.url", se.Field)
	_, err = ts.HTTP.Oracle.Count(context.Background(), "m")
	require.ErrorIs(t, err, harness.ErrRemoteTarget)
	assert.Empty(t, rec.Dialled())
	assert.False(t, errors.Is(err, ErrSpec))
}

// TestReplicaAliasesAreTheToolsOwn: the aliases of a tool's replicas are
// its own containers, so an oracle may name one without --allow-remote.
func TestReplicaAliasesAreTheToolsOwn(t *testing.T) {
	src := strings.Join([]string{
		"version: 1",
		"tools:",
		"  - name: t",
		"    container: {image: onceproof/fixture:dev, port: 8080, replicas: 2}",
		`    http: {url: "http://tool:8080/tickets", body: '{"subject":"{{.Marker}}"}'}`,
		`    oracle: {http: {url: "http://tool-2:8080/count?marker={{.Marker}}", count: /count}}`,
	}, "\n") + "\n"
	s, err := Parse("spec.yaml", []byte(src))
	require.NoError(t, err)
	require.Equal(t, 2, s.Tools[0].Container.Replicas)
	require.NoError(t, s.Tools[0].CheckTargets(nil, "spec.yaml"))
	assert.Equal(t, "tool-2", container.ReplicaAlias("tool", 2, 2))
	assert.Equal(t, "tool", container.ReplicaAlias("tool", 1, 1), "one replica keeps the tool's name")
}
