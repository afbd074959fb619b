package spec

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/report"
)

// TestReportSchemaNamesEveryTransport: the report schema's enum of
// request transports is the transport table's records, no more, no less.
func TestReportSchemaNamesEveryTransport(t *testing.T) {
	var schema struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Items struct {
					Properties map[string]struct {
						Enum []string `json:"enum"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal([]byte(report.ReportSchema), &schema))
	enum := schema.Defs["counterexample"].Properties["requests"].Items.Properties["transport"].Enum
	require.NotEmpty(t, enum, "the schema's counterexample.requests[].transport enum")
	assert.ElementsMatch(t, RecordedTransports(), enum)
}

// TestTransportTableIsConsistent: every row names its section and
// records; rows sharing a section each have a selector among their fields;
// a record belongs to one row.
func TestTransportTableIsConsistent(t *testing.T) {
	seen := map[string]string{}
	for _, k := range Transports() {
		require.NotEmpty(t, k.Name)
		require.NotEmpty(t, k.Section, k.Name)
		require.NotEmpty(t, k.Records, k.Name)
		require.NotNil(t, k.Decode, k.Name)
		shared := 0
		for _, o := range Transports() {
			if o.Section == k.Section {
				shared++
			}
		}
		if shared > 1 {
			assert.Contains(t, k.Fields, k.Selector, "%s shares section %s: its selector must be one of its fields", k.Name, k.Section)
		}
		for _, r := range k.Records {
			assert.Empty(t, seen[r], "record %s of %s is %s's too", r, k.Name, seen[r])
			seen[r] = k.Name
		}
		assert.Same(t, k, KindOf(k.Records[0]))
	}
	assert.True(t, slices.Contains(toolFields, "mcp") && slices.Contains(toolFields, "http"), "the tool's fields include every section")
}
