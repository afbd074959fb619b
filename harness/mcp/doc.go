// Package mcp is the MCP transport: [MCPTool] calls one tool of a server
// over Streamable HTTP, on connections the harness owns, with the key in an
// argument or in _meta.
//
// Imports: the standard library, the MCP Go SDK and harness.
package mcp
