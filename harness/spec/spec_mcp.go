package spec

import (
	"strings"

	"github.com/onceproof/onceproof/harness"
	"github.com/onceproof/onceproof/harness/mcp"
)

// mcpFields are the fields of a tool's mcp section.
var mcpFields = []string{"url", "tool", "arguments", "key_argument", "key_meta", "key_format", "timeout"}

// mcp decodes a tool's mcp section into t.MCP, defaults applied.
func (d toolDecoder) mcp(f field) {
	c := &mcp.MCPConfig{KeyFormat: harness.KeyUUID, Timeout: defaultToolTimeout}
	d.t.MCP = c
	fs, ok := d.mapping(f, mcpFields)
	if !ok {
		return
	}
	if f, ok := d.need(fs, "url", "the server's MCP endpoint, http://host:port/mcp"); ok {
		if s, ok := d.str(f); ok {
			if msg := checkToolURL(s); msg != "" {
				d.errorf(f.line, f.path, "%s", msg)
			}
			c.URL = s
		}
	}
	if f, ok := d.need(fs, "tool", "the MCP tool's name"); ok {
		if s, ok := d.str(f); ok {
			if s == "" {
				d.errorf(f.line, f.path, "empty tool name")
			}
			c.Tool = s
		}
	}
	if f, ok := d.need(fs, "arguments", `the tool's arguments as a JSON object template, e.g. '{"subject":"{{.Marker}}"}'`); ok {
		if s, ok := d.str(f); ok {
			c.Arguments = s
			if tpl, err := harness.ParseTemplate("arguments", s); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			} else if _, err := tpl.Render(checkOp); err != nil {
				d.errorf(f.line, f.path, "%v", err)
			}
		}
	}
	for _, name := range []string{"key_argument", "key_meta"} {
		if f, ok := d.get(fs, name); ok {
			if s, ok := d.str(f); ok {
				if strings.TrimSpace(s) == "" {
					d.errorf(f.line, f.path, "empty: leave it out, or name the field that carries the key")
				}
				if name == "key_argument" {
					c.KeyArgument = s
				} else {
					c.KeyMeta = s
				}
			}
		}
	}
	d.keyFormatAndTimeout(fs, &c.KeyFormat, &c.Timeout)
}
