package lint_test

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onceproof/onceproof/harness/lint"
)

// ExampleMCP lints a tool whose description tells the model to mint a key
// per call.
func ExampleMCP() {
	tool := &mcp.Tool{
		Name:        "send_invoice",
		Description: "Sends an invoice. Generate a new UUID for idempotency_key each time.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"to":              map[string]any{"type": "string", "minLength": 1},
				"idempotency_key": map[string]any{"type": "string", "format": "uuid", "description": "the invoice's key"},
			},
			"required": []any{"to", "idempotency_key"},
		},
	}
	res := lint.MCP(tool, lint.MCPOptions{})
	for _, f := range res.Findings {
		fmt.Println(f.Severity, f.Rule, f.Field)
	}
	// Output:
	// error key-minted-per-call description
}

// ExampleHTTP lints what a spec declares for an HTTP tool.
func ExampleHTTP() {
	res := lint.HTTP(lint.HTTPTool{Name: "create-ticket", Method: "GET", KeyHeader: "Idempotency-Key"})
	fmt.Println(lint.Summary(res.Findings), res.Findings[0].Rule)
	// Output:
	// 1 warning http-safe-method
}
