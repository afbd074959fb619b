package transport

import (
	"slices"
	"time"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/report"
)

// Kind is one row of the transport table (see the package doc).
type Kind struct {
	// Name names the transport in errors and docs ("http", "mcp",
	// "mcp-stdio").
	Name string
	// Section is the spec section the transport reads ("http", "mcp").
	Section string
	// Selector, when several rows share a section, is the field whose
	// presence picks this row ("url", "command"); "" when the section alone
	// does.
	Selector string
	// Fields are the section's fields (the selector included).
	Fields []string
	// Records are the values its attempts record as Request.Transport.
	Records []string
	// Unsupported are the tool-level sections a tool of this transport
	// cannot have, each with the error saying why.
	Unsupported map[string]string
	// NoHeaders, when set, says that the transport's answers carry no
	// headers: the error given for contract fields about headers.
	NoHeaders string
	// Decode decodes the section. Errors go to s; the Config returned is
	// built only when there were none.
	Decode func(s Section) Config
	// Script, when set, writes the reproducer of a failing scenario whose
	// first request it recorded (nil: package repro's toxiproxy script).
	Script func(tool string, s report.ScenarioReport) (string, error)
	// Discover, when set, is how discover and lint reach a server of this
	// transport without a spec.
	Discover *Discover
}

// Discover is the flag discover and lint take for a transport (--Flag
// METAVAR) and the section its argument stands for.
type Discover struct {
	Flag, Metavar, Usage string
	// Section is the section reaching the server arg names (only its
	// address or command set); an error says what is wrong with arg.
	Section func(arg string) (Config, error)
}

// Recorded reports whether name is one of the kind's Request.Transport
// values.
func (k *Kind) Recorded(name string) bool { return slices.Contains(k.Records, name) }

// Common is the configuration every tool shares, whatever its transport:
// it comes from the tool's entry, not from its transport section.
type Common struct {
	Name string
	// Oracle counts the tool's effects (already guarded and settled).
	Oracle harness.Oracle
	// ResultID is a JSON pointer into a success naming its result ("" for
	// none).
	ResultID string
	// Contract is the idempotency contract the tool promises.
	Contract harness.Contract
	// Guard checks every address the tool connects to (nil: loopback only).
	Guard *harness.Guard
	// Dir is the directory of the spec file: relative paths in a section
	// resolve against it.
	Dir string
}

// Config is a decoded transport section.
type Config interface {
	// Build validates the section against c and returns the tool, making
	// no connection and starting nothing (a server process starts when the
	// tool is first made ready). Errors are [harness.ConfigError]s naming
	// the field.
	Build(c Common) (harness.Tool, error)
	// Targets are the network addresses the tool connects to, with the
	// fields naming them ("mcp.url"), for the guard.
	Targets() []harness.Target
}

// Section is a transport section being decoded. Its accessors record each
// field's line and report what is wrong with a value as an error naming
// the file, line and field (so a Decode needs no error handling of its
// own); ok is false when the field is absent or its value was refused.
type Section interface {
	// Has reports whether the section has field name.
	Has(name string) bool
	// String decodes a string field; with want set, a missing field is an
	// error saying what it wants.
	String(name, want string) (string, bool)
	// Strings decodes a list of strings (want says what it should be).
	Strings(name, want string) ([]string, bool)
	// StringMap decodes a mapping of strings (headers, env); each entry's
	// line is recorded under "name.KEY".
	StringMap(name string) (map[string]string, bool)
	// Template decodes a string field holding a template (what names it in
	// errors), which must parse and render for a sample operation.
	Template(name, what, want string) (string, bool)
	// Int decodes an integer field in [lo, hi].
	Int(name string, lo, hi int) (int, bool)
	// Duration decodes a positive duration of at most max.
	Duration(name string, max time.Duration) (time.Duration, bool)
	// KeyFormat decodes key_format and Timeout timeout, the fields every
	// transport section has, with their defaults.
	KeyFormat() harness.KeyFormat
	Timeout() time.Duration
	// Errorf reports an error about field name ("" for the section).
	Errorf(name, format string, args ...any)
}
