package harness

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"text/template"
)

// TemplateData is what request and oracle templates see: {{.Marker}},
// {{.Key}}, {{.Op}}, {{.Int 1 500}} and {{.Pick "a" "b"}}. The helpers draw
// from the operation's seed, so rendering an operation twice gives the same
// bytes.
type TemplateData struct {
	Marker string
	Key    string
	Op     string
	rnd    *rand.Rand
}

func newTemplateData(op Operation) *TemplateData {
	return &TemplateData{Marker: op.Marker, Key: op.Key, Op: op.ID,
		rnd: rand.New(rand.NewPCG(op.Seed, 0x6f6e6365))}
}

// Int draws an integer in [lo, hi].
func (d *TemplateData) Int(lo, hi int) (int, error) {
	if hi < lo {
		return 0, fmt.Errorf("Int %d %d: hi is below lo", lo, hi)
	}
	return lo + d.rnd.IntN(hi-lo+1), nil
}

// Pick draws one of its arguments.
func (d *TemplateData) Pick(choices ...string) (string, error) {
	if len(choices) == 0 {
		return "", fmt.Errorf("Pick needs at least one choice")
	}
	return choices[d.rnd.IntN(len(choices))], nil
}

// Template is a parsed request or oracle template.
type Template struct {
	src string
	t   *template.Template
}

// ParseTemplate parses src; name is used in error messages.
func ParseTemplate(name, src string) (*Template, error) {
	t, err := template.New(name).Option("missingkey=error").Parse(src)
	if err != nil {
		return nil, err
	}
	return &Template{src: src, t: t}, nil
}

// MustTemplate is ParseTemplate that panics on error, for templates written in
// code.
func MustTemplate(src string) *Template {
	t, err := ParseTemplate("template", src)
	if err != nil {
		panic(err)
	}
	return t
}

// String returns the template's source.
func (t *Template) String() string { return t.src }

// UsesMarker reports whether rendering depends on the marker.
func (t *Template) UsesMarker() bool { return strings.Contains(t.src, ".Marker") }

// Render executes the template for op.
func (t *Template) Render(op Operation) (string, error) {
	if t == nil {
		return "", nil
	}
	var b bytes.Buffer
	if err := t.t.Execute(&b, newTemplateData(op)); err != nil {
		return "", err
	}
	return b.String(), nil
}
