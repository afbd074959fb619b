// Package mcp is the MCP transport over Streamable HTTP: [MCPTool] calls
// one tool of a server, on connections the harness owns, with the key in
// an argument or in _meta, and mcp.headers on every request. [Kind] is its
// row in the transport table. What both MCP transports share (this one and
// package stdio) is here too: the mcp section's call fields
// ([DecodeCall]), rendering a tools/call ([Caller]), mapping a result to
// ok or refused ([ResultReply]) and the [Server] that lint and discover
// list tools from.
//
// Imports: the standard library, the MCP Go SDK, harness and
// harness/transport.
package mcp
