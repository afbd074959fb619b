package harness

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/onceproof/onceproof/harness/jsonptr"
)

// TemplateData is what request and oracle templates see: {{.Marker}},
// {{.Key}}, {{.Op}}, {{.Int 1 500}} and {{.Pick "a" "b"}}, {{.Env "NAME"}}
// (an environment variable: a secret, see [Template.EnvNames]), and in a
// long-running tool's status call {{.OperationID}} (the operation the
// trigger's answer named; "" elsewhere). The helpers draw from the
// operation's seed, so rendering an operation twice gives the same bytes.
type TemplateData struct {
	Marker      string
	Key         string
	Op          string
	OperationID string
	rnd         *rand.Rand
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

// Env returns the environment variable name, which must be set. Its value
// is treated as a secret: whoever writes what onceproof saw redacts it
// (see [Template.EnvNames]).
func (d *TemplateData) Env(name string) (string, error) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrEnvUnset, name)
	}
	return v, nil
}

// ErrEnvUnset marks a template that reads an environment variable
// ({{.Env "NAME"}}) that is not set.
var ErrEnvUnset = errors.New("environment variable not set")

// Template is a parsed request or oracle template.
type Template struct {
	src string
	t   *template.Template
	env []string // the variables it reads with {{.Env "NAME"}}
}

// envNameRE is what {{.Env}} takes: a variable name, quoted.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// EnvNames lists the environment variables the template reads with
// {{.Env "NAME"}}, sorted: their values are secrets, never written where
// onceproof reports what it sent.
func (t *Template) EnvNames() []string {
	if t == nil {
		return nil
	}
	return slices.Clone(t.env)
}

// envCalls collects the names of every {{.Env "NAME"}} under n; a call
// that does not name its variable with one quoted string is an error (the
// secrets a spec reads must be known before anything renders).
func envCalls(n parse.Node, names *[]string) error {
	var err error
	walk(n, func(n parse.Node) {
		cmd, ok := n.(*parse.CommandNode)
		if !ok || err != nil {
			return
		}
		for i, a := range cmd.Args {
			f, ok := a.(*parse.FieldNode)
			if !ok || len(f.Ident) != 1 || f.Ident[0] != "Env" {
				continue
			}
			if i != 0 || len(cmd.Args) != 2 {
				err = fmt.Errorf(`%s: want {{.Env "NAME"}}: one quoted variable name`, shorten(cmd.String()))
				return
			}
			s, ok := cmd.Args[1].(*parse.StringNode)
			if !ok || !envNameRE.MatchString(s.Text) {
				err = fmt.Errorf(`%s: want {{.Env "NAME"}} with a quoted variable name (letters, digits, _)`, shorten(cmd.String()))
				return
			}
			if !slices.Contains(*names, s.Text) {
				*names = append(*names, s.Text)
			}
		}
	})
	return err
}

// walk calls f on n and every node under it.
func walk(n parse.Node, f func(parse.Node)) {
	if n == nil {
		return
	}
	f(n)
	switch x := n.(type) {
	case *parse.ListNode:
		if x == nil {
			return
		}
		for _, c := range x.Nodes {
			walk(c, f)
		}
	case *parse.ActionNode:
		walk(x.Pipe, f)
	case *parse.PipeNode:
		if x == nil {
			return
		}
		for _, c := range x.Cmds {
			walk(c, f)
		}
	case *parse.CommandNode:
		for _, a := range x.Args {
			walk(a, f)
		}
	case *parse.IfNode:
		walkBranch(&x.BranchNode, f)
	case *parse.WithNode:
		walkBranch(&x.BranchNode, f)
	case *parse.RangeNode:
		walkBranch(&x.BranchNode, f)
	case *parse.TemplateNode:
		walk(x.Pipe, f)
	}
}

func walkBranch(b *parse.BranchNode, f func(parse.Node)) {
	walk(b.Pipe, f)
	if b.List != nil {
		walk(b.List, f)
	}
	if b.ElseList != nil {
		walk(b.ElseList, f)
	}
}

// ParseTemplate parses src; name is used in error messages. A template
// may not print its data itself ({{.}}, {{$}}): that is no stable value, and
// a retry must render the same bytes.
func ParseTemplate(name, src string) (*Template, error) {
	t, err := template.New(name).Option("missingkey=error").Parse(src)
	if err != nil {
		return nil, err
	}
	for _, tt := range t.Templates() {
		if tt.Tree == nil {
			continue
		}
		if n := wholeData(tt.Tree.Root); n != nil {
			if _, loop := n.(*parse.RangeNode); loop {
				return nil, fmt.Errorf("template: %s: %s: range is not allowed: a request is a fixed text with a few drawn values, and a loop could run for hours", name, shorten(n.String()))
			}
			return nil, fmt.Errorf("template: %s: %s uses the template's data as a whole, which has no stable text: use .Marker, .Key, .Op, .Int or .Pick", name, n)
		}
	}
	var env []string
	for _, tt := range t.Templates() {
		if tt.Tree == nil {
			continue
		}
		if err := envCalls(tt.Tree.Root, &env); err != nil {
			return nil, fmt.Errorf("template: %s: %w", name, err)
		}
	}
	slices.Sort(env)
	return &Template{src: src, t: t, env: env}, nil
}

// wholeData returns the first node under n that a template may not use: one
// that stands for the template's data as a whole (the dot, or the variable
// $), or a range loop; nil if there is none.
func wholeData(n parse.Node) parse.Node {
	switch x := n.(type) {
	case nil:
		return nil
	case *parse.DotNode:
		return x
	case *parse.VariableNode:
		if len(x.Ident) == 1 && x.Ident[0] == "$" {
			return x
		}
	case *parse.ListNode:
		if x == nil {
			return nil
		}
		for _, c := range x.Nodes {
			if w := wholeData(c); w != nil {
				return w
			}
		}
	case *parse.ActionNode:
		return wholeData(x.Pipe)
	case *parse.PipeNode:
		if x == nil {
			return nil
		}
		for _, c := range x.Cmds {
			if w := wholeData(c); w != nil {
				return w
			}
		}
	case *parse.CommandNode:
		for _, a := range x.Args {
			if w := wholeData(a); w != nil {
				return w
			}
		}
	case *parse.ChainNode:
		return wholeData(x.Node)
	case *parse.IfNode:
		return wholeBranch(&x.BranchNode)
	case *parse.RangeNode:
		return x
	case *parse.WithNode:
		return wholeBranch(&x.BranchNode)
	case *parse.TemplateNode:
		return wholeData(x.Pipe)
	}
	return nil
}

func wholeBranch(b *parse.BranchNode) parse.Node {
	for _, n := range []parse.Node{b.Pipe, b.List, b.ElseList} {
		if w := wholeData(n); w != nil {
			return w
		}
	}
	return nil
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

// MaxRendered bounds what one template renders.
const MaxRendered = 1 << 20

// errTooLong ends the execution of a template that renders too much.
var errTooLong = fmt.Errorf("renders more than %d bytes", MaxRendered)

// cappedBuffer is a buffer that refuses to grow past MaxRendered.
type cappedBuffer struct{ bytes.Buffer }

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > MaxRendered {
		return 0, errTooLong
	}
	return b.Buffer.Write(p)
}

// Render executes the template for op.
func (t *Template) Render(op Operation) (string, error) {
	return t.RenderOperation(op, "")
}

// RenderOperation executes the template for op, with {{.OperationID}} set
// to id (a long-running tool's status call).
func (t *Template) RenderOperation(op Operation, id string) (string, error) {
	if t == nil {
		return "", nil
	}
	var b cappedBuffer
	data := newTemplateData(op)
	data.OperationID = id
	if err := t.t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// shorten cuts s for an error message.
func shorten(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// Pointer is a parsed JSON pointer (RFC 6901; see package jsonptr).
type Pointer = jsonptr.Pointer

// ParsePointer parses s ("" is the whole document, otherwise it starts
// with "/").
func ParsePointer(s string) (Pointer, error) { return jsonptr.Parse(s) }

// ParseResultID parses tool's result_id pointer s: nil for "", a
// [ConfigError] naming result_id when s is not a pointer.
func ParseResultID(tool, s string) (*Pointer, error) {
	if s == "" {
		return nil, nil
	}
	p, err := ParsePointer(s)
	if err != nil {
		return nil, ConfigError(tool, "result_id", err)
	}
	return &p, nil
}

// MustPointer is ParsePointer that panics on error.
func MustPointer(s string) Pointer { return jsonptr.Must(s) }
