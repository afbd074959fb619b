package stdio

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/mcp"
	"github.com/onceproof/onceproof/harness/transport"
)

// listTimeout bounds starting a server to list its tools.
const listTimeout = 20 * time.Second

// ListTools starts the server argv (in dir, with env added to the
// environment: KEY=VALUE), lists its tools and stops it, its whole process
// group included. A server that does not start or answer is an error with
// the end of its stderr.
func ListTools(ctx context.Context, argv, env []string, dir string) ([]*sdk.Tool, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("no command")
	}
	var log tail
	p, err := start(command{argv: argv, env: env, dir: dir}, 1, "started", &log)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", strings.Join(argv, " "), err)
	}
	defer p.stop()
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	if err := p.handshake(ctx); err != nil {
		return nil, fmt.Errorf("mcp stdio %s: %w%s", strings.Join(argv, " "), err, stderrHint(log.last(8)))
	}
	tools, err := p.listTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcp stdio %s: %w%s", strings.Join(argv, " "), err, stderrHint(log.last(8)))
	}
	return tools, nil
}

// ListTools implements mcp.Server: the server is started, asked and
// stopped (a command is local: the guard has nothing to check).
func (s section) ListTools(ctx context.Context, _ *harness.Guard) ([]*sdk.Tool, error) {
	cmd, err := renderCommand(s.c)
	if err != nil {
		return nil, err
	}
	return ListTools(ctx, cmd.argv, cmd.env, cmd.dir)
}

// Where implements mcp.Server.
func (s section) Where() string { return "the server " + strings.Join(s.c.Command, " ") }

// Call implements mcp.Server.
func (s section) Call() mcp.CallConfig { return s.c.Call }

// Reach implements mcp.Server.
func (s section) Reach() mcp.Reach {
	return mcp.Reach{Command: slices.Clone(s.c.Command), Dir: s.c.Dir}
}

// WithDir returns the section with its directory resolved against the
// spec file's (see transport.Common.Dir).
func (s section) WithDir(specDir string) transport.Config {
	if !filepath.IsAbs(s.c.Dir) && specDir != "" {
		s.c.Dir = filepath.Join(specDir, s.c.Dir)
	}
	return s
}

// SplitCommand splits a command line into words as a shell would, with
// single and double quotes and backslashes (no expansion of any kind).
func SplitCommand(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord, quote := false, rune(0)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]):
				i++
				w.WriteRune(rs[i])
			default:
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			w.WriteRune(rs[i])
			inWord = true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	return words, nil
}
