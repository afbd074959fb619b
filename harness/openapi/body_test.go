package openapi

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onceproof/onceproof/harness/spec"
)

// oneOperation is a document with one POST /x whose request body is given
// (indented for "content:"), and components given as YAML.
func oneOperation(version, requestContent, components string) string {
	return fmt.Sprintf(`openapi: %s
info: {title: t, version: "1"}
servers: [{url: "http://127.0.0.1:8080"}]
paths:
  /x:
    post:
      operationId: x
      requestBody:
        content:
%s
      responses:
        "201": {description: created}
components:
%s
`, version, requestContent, components)
}

// draftOne drafts the one operation of doc and returns its tool spec (the
// oracle filled in) and the note on its body.
func draftOne(t *testing.T, doc string) (spec.Tool, string) {
	t.Helper()
	d, err := Parse("doc.yaml", []byte(doc), Options{})
	require.NoError(t, err, doc)
	draft, err := d.Draft(nil)
	require.NoError(t, err)
	require.Len(t, draft.Tools, 1)
	var b bytes.Buffer
	require.NoError(t, spec.Write(&b, draft))
	s, err := spec.Parse("written.yaml", []byte(fillOracles(b.String())))
	require.NoError(t, err, b.String())
	return s.Tools[0], draft.Tools[0].Notes["http.body"].Text
}

// TestBodyTemplates builds body templates from schemas of every shape and
// renders them.
func TestBodyTemplates(t *testing.T) {
	const json = "          application/json:\n            schema:\n"
	for _, tc := range []struct {
		reason     string
		version    string
		content    string // under requestBody.content
		components string
		want       string // the rendered body, with testOp's marker and key
		wantNote   string // a line of the body's note
	}{
		{
			reason: "allOf branches merge their properties and required lists",
			content: json + `              allOf:
                - {$ref: '#/components/schemas/A'}
                - {type: object, required: [title], properties: {title: {type: string}}}`,
			components: `  schemas:
    A: {type: object, required: [kind], properties: {kind: {type: string, enum: [x, y]}, extra: {type: string}}}`,
			want:     `{"kind":"x","title":"onceproof onceproof-00000000-m00000001"}`,
			wantNote: "the marker in /title",
		},
		{
			reason: "anyOf takes its first branch and says so",
			content: json + `              anyOf:
                - {type: object, required: [name], properties: {name: {type: string}}, title: Named}
                - {type: object, required: [id], properties: {id: {type: integer}}}`,
			components: "  {}",
			want:       `{"name":"onceproof onceproof-00000000-m00000001"}`,
			wantNote:   "anyOf: took Named, branch 1 of 2",
		},
		{
			reason:  "3.0 boolean exclusive bounds and a 3.1 numeric one",
			version: "3.0.3",
			content: json + `              type: object
              required: [a, b, note]
              properties:
                a: {type: integer, minimum: 0, exclusiveMinimum: true, maximum: 10, exclusiveMaximum: true}
                b: {type: integer, maximum: 5}
                note: {type: string}`,
			components: "  {}",
			want:       `{"a":6,"b":-83,"note":"onceproof onceproof-00000000-m00000001"}`,
			wantNote:   "made up: /a ({{.Int 1 9}}), /b ({{.Int -94 5}})",
		},
		{
			reason:  "3.1 numeric exclusiveMinimum",
			version: "3.1.0",
			content: json + `              type: object
              required: [a, note]
              properties:
                a: {type: integer, exclusiveMinimum: 3, maximum: 4}
                note: {type: string}`,
			components: "  {}",
			want:       `{"a":4,"note":"onceproof onceproof-00000000-m00000001"}`,
			wantNote:   "made up: /a (4)",
		},
		{
			reason: "template text in an example is escaped, and a media example is used whole",
			content: json + `              type: object
              required: [subject]
              properties:
                subject: {type: string}
                tags: {type: array, items: {type: string}}
            example:
              subject: "hi {{ there }}"
              tags: ["{{.Key}}", b]`,
			components: "  {}",
			want:       `{"subject":"hi {{ there }} onceproof-00000000-m00000001","tags":["{{.Key}}","b"]}`,
		},
		{
			reason:  "a required recursive schema stops with a note",
			content: json + `              $ref: '#/components/schemas/Node'`,
			components: `  schemas:
    Node: {type: object, required: [label, next], properties: {label: {type: string}, next: {$ref: '#/components/schemas/Node'}}}`,
			want:     `{"label":"onceproof onceproof-00000000-m00000001","next":{}}`,
			wantNote: "stopped at a recursive or too deep schema",
		},
		{
			reason: "arrays get minItems items; the key property carries {{.Key}}",
			content: json + `              type: object
              required: [lines, idempotency_key]
              properties:
                idempotency_key: {type: string}
                lines:
                  type: array
                  minItems: 2
                  items: {type: object, required: [qty, memo], properties: {qty: {type: integer, multipleOf: 5, minimum: 1, maximum: 9}, memo: {type: string}}}`,
			components: "  {}",
			want:       `{"idempotency_key":"key-test","lines":[{"qty":5,"memo":"onceproof onceproof-00000000-m00000001"},{"qty":5,"memo":"onceproof"}]}`,
			wantNote:   "made up: /lines/0/qty (5), /lines/1/qty (5), /lines/1/memo",
		},
		{
			reason: "a field too short for the marker is passed over for an email",
			content: json + `              type: object
              required: [name, contact]
              properties:
                name: {type: string, maxLength: 10}
                contact: {type: string, format: email}`,
			components: "  {}",
			want:       `{"name":"onceproof","contact":"onceproof-00000000-m00000001@example.com"}`,
			wantNote:   "the marker in /contact",
		},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			if tc.version == "" {
				tc.version = "3.1.0"
			}
			ts, note := draftOne(t, oneOperation(tc.version, tc.content, tc.components))
			_, body := request(t, ts)
			if strings.Contains(tc.want, "key-test") {
				assert.Equal(t, "", *ts.HTTP.KeyHeader, "the key travels in the body")
			}
			assert.Equal(t, tc.want, body, "%s\n%s", tc.reason, note)
			if tc.wantNote != "" {
				assert.Contains(t, note, tc.wantNote, tc.reason)
			}
		})
	}
}

// TestNumber draws integers within the schema's bounds.
func TestNumber(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		reason string
		s      flat
		want   string
	}{
		{"no bounds", flat{}, "{{.Int 1 100}}"},
		{"a minimum", flat{minimum: f(50)}, "{{.Int 50 149}}"},
		{"a maximum below 1", flat{maximum: f(-5)}, "{{.Int -104 -5}}"},
		{"fractional bounds", flat{minimum: f(0.5), maximum: f(2.5)}, "{{.Int 1 2}}"},
		{"exclusive bounds", flat{minimum: f(1), exclMin: true, maximum: f(3), exclMax: true}, "2"},
		{"no integer in range", flat{minimum: f(0.2), maximum: f(0.4)}, "0.30000000000000004"},
		{"multipleOf", flat{minimum: f(0), maximum: f(100), multipleOf: f(25)}, `{{.Pick "0" "25" "50" "75" "100"}}`},
		{"multipleOf with no multiple in range", flat{minimum: f(1), maximum: f(2), multipleOf: f(5)}, "{{.Int 1 2}}"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			v := (&builder{}).number(&tc.s)
			assert.Equal(t, tc.want, v.lit+v.tpl, tc.reason)
		})
	}
	lit := (&builder{literal: true}).number(&flat{minimum: f(7)})
	assert.Equal(t, "7", lit.lit, "a literal builder takes the lowest value")
}

// TestFormEncoding spells nested values the Stripe way and escapes what
// needs it.
func TestFormEncoding(t *testing.T) {
	v := &objVal{fields: []*fieldVal{
		{name: "a b", v: &strVal{parts: []part{{lit: "x&y=z {{"}}}, include: true},
		{name: "meta", v: &objVal{fields: []*fieldVal{{name: "k", v: &rawVal{lit: "true"}, include: true}}}, include: true},
		{name: "list", v: &arrVal{items: []val{&rawVal{tpl: "{{.Int 1 2}}"}, &strVal{parts: []part{{lit: "m "}, {tpl: "{{.Marker}}"}}}}}, include: true},
		{name: "skipped", v: &rawVal{lit: "1"}},
		{name: "nil", v: &rawVal{lit: "null"}, include: true},
	}}
	assert.Equal(t, `a+b=x%26y%3Dz+%7B%7B&meta[k]=true&list[0]={{.Int 1 2}}&list[1]=m+{{.Marker}}&nil=`, renderForm(v))
}
