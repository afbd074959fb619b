package jsonptr_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/jsonptr"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

func TestLookup(t *testing.T) {
	doc := `{"id":"t-1","a/b":{"m~n":[10,{"x":true}]},"list":[1,2]}`
	for _, tc := range []struct {
		ptr    string
		want   string // JSON of the value; "" for an error
		reason string
	}{
		{"", doc, "the empty pointer is the whole document"},
		{"/id", `"t-1"`, "a member"},
		{"/a~1b/m~0n/0", `10`, "~1 is / and ~0 is ~ (RFC 6901 §4)"},
		{"/a~1b/m~0n/1/x", `true`, "through an array into an object"},
		{"/missing", "", "no such member"},
		{"/list/2", "", "an index past the end"},
		{"/list/-1", "", "a negative index"},
		{"/id/x", "", "inside a string"},
	} {
		p, err := jsonptr.Parse(tc.ptr)
		require.NoError(t, err, tc.reason)
		got, err := p.Lookup(decode(t, doc))
		if tc.want == "" {
			assert.Error(t, err, tc.reason)
			continue
		}
		require.NoError(t, err, tc.reason)
		assert.Equal(t, decode(t, tc.want), got, tc.reason)
		assert.Equal(t, tc.ptr, p.String(), "String returns the pointer as written")
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct {
		ptr    string
		reason string
	}{
		{"id", "a pointer starts with /"},
		{"/a~2b", "~ must be followed by 0 or 1"},
		{"/a~", "a lone ~ at the end"},
	} {
		_, err := jsonptr.Parse(tc.ptr)
		assert.Error(t, err, tc.reason)
	}
}

func TestRemove(t *testing.T) {
	doc := decode(t, `{"id":"t-1","meta":{"request_id":"r-9","kept":1},"list":[1,2,3]}`)
	for _, tc := range []struct {
		ptr    string
		want   string
		reason string
	}{
		{"/meta/request_id", `{"id":"t-1","meta":{"kept":1},"list":[1,2,3]}`, "a nested member goes"},
		{"/list/1", `{"id":"t-1","meta":{"request_id":"r-9","kept":1},"list":[1,null,3]}`, "an array element becomes null so indexes do not shift"},
		{"/nothing/here", `{"id":"t-1","meta":{"request_id":"r-9","kept":1},"list":[1,2,3]}`, "a pointer to nothing leaves the document as it was"},
	} {
		got := jsonptr.Must(tc.ptr).Remove(doc)
		assert.Equal(t, decode(t, tc.want), got, tc.reason)
	}
	assert.Equal(t, decode(t, `{"id":"t-1","meta":{"request_id":"r-9","kept":1},"list":[1,2,3]}`), doc, "Remove does not change its input")
}
