package spec

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness"
)

func TestLocateNamesTheFieldAPreflightFound(t *testing.T) {
	s, err := Parse("tools.yaml", []byte(`version: 1
tools:
  - name: t
    http: {url: "http://127.0.0.1:8080/x", body: "{{.Marker}}"}
    result_id: /nope
    oracle:
      http:
        url: "http://127.0.0.1:8080/count/{{.Marker}}"
        count: /count
`))
	require.NoError(t, err)
	ts := s.Tools[0]
	found := fmt.Errorf("%w: %w", harness.ErrPreflight, &harness.FieldError{Field: "result_id", Err: fmt.Errorf("%w: /nope finds no value", harness.ErrResultID)})
	err = ts.Locate(found)
	assert.Equal(t, "tools.yaml:5: tools[0].result_id: preflight failed: result pointer matches nothing: /nope finds no value", err.Error())
	assert.ErrorIs(t, err, harness.ErrPreflight)
	assert.ErrorIs(t, err, harness.ErrResultID)
	assert.NotErrorIs(t, err, ErrSpec, "found by running the tool: not a spec error (exit 3, not 2)")

	shape := fmt.Errorf("%w: %w", harness.ErrPreflight, fmt.Errorf("%w x: %w", harness.ErrOracle, &harness.FieldError{Field: "oracle.http.count", Err: harness.ErrOracleShape}))
	assert.Equal(t, "tools.yaml:9: tools[0].oracle.http.count: preflight failed: oracle answer has the wrong shape", ts.Locate(shape).Error())

	plain := fmt.Errorf("%w: no", harness.ErrPreflight)
	assert.Same(t, plain, ts.Locate(plain), "an error about no field comes back unchanged")
}
