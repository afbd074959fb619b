package stdio

import (
	"maps"
	"path/filepath"
	"slices"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/mcp"
	"github.com/onceproof/onceproof/harness/transport"
)

// Kind is the transport row of MCP over stdio: an mcp section with a
// command.
var Kind = &transport.Kind{
	Name:        Record,
	Section:     "mcp",
	Selector:    "command",
	Fields:      append([]string{"command", "env", "dir", "processes"}, mcp.CallFields...),
	Records:     []string{Record},
	Unsupported: mcp.Unsupported,
	NoHeaders:   mcp.NoHeaders,
	Decode:      decode,
	Script:      Script,
	Discover: &transport.Discover{Flag: "mcp-command", Metavar: "CMD", Usage: "an MCP server over stdio: its command line, e.g. 'node build/index.js' (started, asked, stopped)",
		Section: func(arg string) (transport.Config, error) {
			argv, err := SplitCommand(arg)
			if err != nil {
				return nil, err
			}
			return section{c: Config{Command: argv}}, nil
		}},
}

// decode decodes an mcp section with a command.
func decode(s transport.Section) transport.Config {
	var c Config
	if argv, ok := s.Strings("command", "the server's command line as a list, e.g. [node, build/index.js]"); ok {
		if len(argv) == 0 || argv[0] == "" {
			s.Errorf("command", "empty: want the server's command line, e.g. [node, build/index.js]")
		}
		c.Command = argv
	}
	if env, ok := s.StringMap("env"); ok {
		for _, k := range slices.Sorted(maps.Keys(env)) {
			v := env[k]
			if !envNameOK(k) {
				s.Errorf("env."+k, "bad environment variable name %q: want letters, digits and '_', not starting with a digit", k)
				continue
			}
			tpl, err := harness.ParseTemplate("env "+k, v)
			if err != nil {
				s.Errorf("env."+k, "%v", err)
				continue
			}
			if _, err := tpl.Render(harness.Operation{}); err != nil {
				s.Errorf("env."+k, "%v", err)
			}
		}
		c.Env = env
	}
	if dir, ok := s.String("dir", ""); ok {
		if dir == "" {
			s.Errorf("dir", "empty: leave it out to run the server in the spec file's directory")
		}
		c.Dir = dir
	}
	if n, ok := s.Int("processes", 1, MaxProcesses); ok {
		c.Processes = n
	}
	c.Call = mcp.DecodeCall(s)
	return section{c: c}
}

func envNameOK(k string) bool {
	if k == "" || k[0] >= '0' && k[0] <= '9' {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// section is a decoded mcp section with a command.
type section struct{ c Config }

// Build implements transport.Config: the server runs in dir, resolved
// against the spec file's directory (which it defaults to).
func (s section) Build(common transport.Common) (harness.Tool, error) {
	c := s.c
	c.Name, c.Oracle, c.ResultID, c.Contract = common.Name, common.Oracle, common.ResultID, common.Contract
	if !filepath.IsAbs(c.Dir) && common.Dir != "" {
		c.Dir = filepath.Join(common.Dir, c.Dir)
	}
	return New(c)
}

// Targets implements transport.Config: a stdio server is started, not
// connected to.
func (s section) Targets() []harness.Target { return nil }

// Command is how the section starts its server (for lint and discover).
func (s section) Command() []string { return slices.Clone(s.c.Command) }
