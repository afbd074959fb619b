package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onceproof/onceproof/harness"
	omcp "github.com/onceproof/onceproof/harness/mcp"
	"github.com/onceproof/onceproof/harness/spec"
	"github.com/onceproof/onceproof/harness/transport"
)

// serverFlag is one transport's flag of discover and lint (--mcp URL,
// --mcp-command CMD), from the transport table.
type serverFlag struct {
	kind  *transport.Kind
	value string
}

// serverFlags registers the server flag of every transport that has one.
func serverFlags(fs *flag.FlagSet) []*serverFlag {
	var out []*serverFlag
	for _, k := range spec.Transports() {
		if d := k.Discover; d != nil {
			f := &serverFlag{kind: k}
			fs.StringVar(&f.value, d.Flag, "", d.Usage+" (`"+d.Metavar+"`)")
			out = append(out, f)
		}
	}
	return out
}

// given are the server flags set.
func givenServers(flags []*serverFlag) []*serverFlag {
	var out []*serverFlag
	for _, f := range flags {
		if f.value != "" {
			out = append(out, f)
		}
	}
	return out
}

// serverChoices spells the server flags for a usage error: "--mcp URL,
// --mcp-command CMD".
func serverChoices(flags []*serverFlag) string {
	parts := make([]string, len(flags))
	for i, f := range flags {
		parts[i] = "--" + f.kind.Discover.Flag + " " + f.kind.Discover.Metavar
	}
	return strings.Join(parts, ", ")
}

// reachServer is the MCP server a server flag names and its tools, listed
// where guard allows; cmd names the command for errors ("discover").
func reachServer(ctx context.Context, cmd string, f *serverFlag, guard *harness.Guard) (omcp.Server, []*mcp.Tool, error) {
	cfg, err := f.kind.Discover.Section(f.value)
	if err != nil {
		return nil, nil, usagef("%s: --%s: %v", cmd, f.kind.Discover.Flag, err)
	}
	srv, ok := cfg.(omcp.Server)
	if !ok {
		return nil, nil, usagef("%s: --%s: not a server that lists its tools", cmd, f.kind.Discover.Flag)
	}
	if u := srv.Reach().URL; u != "" {
		if err := guard.CheckURL(u); err != nil {
			return nil, nil, fmt.Errorf("--%s: %w", f.kind.Discover.Flag, err)
		}
	}
	tools, err := srv.ListTools(ctx, guard)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", harness.ErrUnreachable, err)
	}
	return srv, tools, nil
}
