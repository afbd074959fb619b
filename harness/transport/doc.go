// Package transport is the seam every transport plugs into: how onceproof
// reaches a tool (HTTP, MCP over Streamable HTTP, MCP over stdio, ...).
//
// A transport is one package and one row ([Kind]) in the transport table,
// which package spec keeps (spec.Transports) as package scenarios keeps its
// scenario table: one list, everything else derived from it. A row says
//
//   - which spec section it reads (Section, and Selector when rows share a
//     section: mcp.url is MCP over Streamable HTTP, mcp.command MCP over
//     stdio) and the section's fields: the spec loader's allowed fields,
//     its "no transport section" message and its typo hints come from the
//     table;
//   - how to decode the section (Decode, through the typed [Section]
//     accessors spec implements: every error names file, line and field)
//     into a [Config], which builds the [harness.Tool] from the section and
//     the configuration every tool shares ([Common]: name, oracle, result
//     id, contract, guard) and names the addresses the guard must check;
//   - the names its attempts record as report.Request.Transport (the
//     report schema's enum is tied to the table by a test), which
//     tool-level sections it cannot have (Unsupported, with why) and
//     whether its answers carry headers (NoHeaders);
//   - its reproducer (Script; nil keeps the toxiproxy-and-curl script of
//     package repro, which speaks HTTP and MCP over Streamable HTTP);
//   - the flag discover and lint take to reach one of its servers without
//     a spec (Discover: --mcp URL, --mcp-command CMD), and the section
//     that flag's argument stands for.
//
// The tool it builds owns its wire accounting: [harness.Call.Wire] is the
// bytes one attempt writes on the connection the harness dialled through
// the fault proxy, byte for byte, with BodyStart where the body starts (a
// torn request is cut inside it). A transport whose bytes vary from one
// attempt to the next (a JSON-RPC id) keeps their length fixed, so Wire's
// length and BodyStart hold for every attempt (BodyEnd marks framing after
// the body); one whose framing is known only as it writes (an HTTP client's
// head) tells the harness the whole length through [harness.Framed]. How
// an answer maps to ok, refused or
// unknown is the tool's Send (harness.Reply). Optional capabilities
// (harness.Crasher, harness.Renewer, harness.Replicated, harness.Logged,
// harness.Hinted, ...) are what scenarios ask for: no package outside a
// transport switches on which transport a tool is.
//
// # Adding a transport
//
//  1. Write package harness/NAME: a Config type with Build and Targets, a
//     Tool implementing harness.Tool (Prepare renders the exact bytes, Send
//     writes them on the given connection and maps the answer), and
//     var Kind = &transport.Kind{...} with its section, fields, records and
//     Decode (and Script if curl cannot replay it). Its doc.go says what it
//     imports; add it to harness/layout_test.go.
//  2. Add one row, NAME.Kind, to spec.Transports.
//  3. Add its record names to the enum of report.schema.json's
//     request.transport (a test fails until the two agree), and its
//     fixtures.
//
// Nothing else changes: spec decodes, checks targets, builds, starts and
// lints through the row; discover and lint take the row's flag; reports and
// reproducers carry the row's records. Adding MCP over stdio was package
// harness/stdio and the row stdio.Kind.
//
// The seam, in short:
//
//	type Kind struct {
//		Name, Section, Selector string       // "mcp-stdio", "mcp", "command"
//		Fields, Records         []string     // the section's fields; Request.Transport values
//		Unsupported             map[string]string
//		NoHeaders               string
//		Decode   func(Section) Config         // through typed, located accessors
//		Script   func(tool string, s report.ScenarioReport) (string, error)
//		Discover *Discover                    // --mcp-command CMD → a Config
//	}
//	type Config interface {
//		Build(Common) (harness.Tool, error)   // Common: name, oracle, result id, contract, guard, spec dir
//		Targets() []harness.Target
//	}
//	// harness.Tool: Prepare → Call{Wire, BodyStart, BodyEnd}; Send(ctx, conn, call, deadline) → Reply
//	// (Outcome ok/unknown, Status: 2xx ok, 4xx refused), optional Framed, Readier, Forker,
//	// Replicated, Crasher, Renewer, Logged, Hinted, Secretive, RequestDescriber.
//
// Imports: the standard library, harness and harness/report.
package transport
