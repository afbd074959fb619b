// Package harness is onceproof's core: it runs attempts of a write tool
// through a fault proxy and measures their effects.
//
// The nouns: an [Operation] is one logical intent with a stable idempotency
// key and a unique marker; a [Call] is that operation rendered for a [Tool]
// (the contract every transport implements, with optional capabilities
// such as [Crasher], [Linked], [Hinted], [Refuser], [Lookuper],
// [LongRunning]); an attempt is one
// transmission of a call on a connection the harness owns, with a
// three-valued [Outcome] and, when it got no answer, a typed failure and
// the phase its fault struck in; an [Oracle] counts the effects that carry
// a marker, queried directly and never through the proxy ([HTTPOracle],
// [CommandOracle], [OracleFunc], wrapped by [Settled]; oracles in other
// packages join through the optional [Resolvable], [Guardable] and
// [Targeted] methods). A [Session] ties a tool to its proxy, checks with
// [Session.Preflight] that the tool and oracle agree before anything is
// judged, and records every attempt, the lookups of an operation by its
// identity ([Session.Lookup]) and a long-running tool's status polls
// ([Session.Poll]) among them. [HTTPTool] is the HTTP transport.
//
// Constructors report a bad configuration as a [*FieldError] naming the
// field at fault ([ConfigError]), so a caller locates it without reading
// the text. The records of a run (attempts, counterexamples, the contract a
// tool is judged by) are package report's types under their names here.
//
// The packages around it, each with one concern:
//
//	harness/report       the report model, JSON (and its schema), text, Markdown, JUnit, certificates
//	harness/report/html  the HTML page (templates and CSS embedded)
//	harness/baseline     known failures, applied to a report
//	harness/spec         the YAML spec: loading, validation, building and starting its tools, writing
//	harness/transport    the transport seam: a transport is one package and one row
//	harness/mcp          MCP over Streamable HTTP (and what both MCP transports share)
//	harness/stdio        MCP over stdio: server processes behind bridges through the proxy
//	harness/container    Docker environments (testcontainers) and the container tool
//	harness/storeoracle  SQL and Redis oracles
//	harness/capture      the endpoint that plays an HTTP dependency or an idempotent server
//	harness/lint         static checks of what a model reads about a tool
//	harness/openapi      spec drafts from OpenAPI documents
//	harness/repro        reproducer scripts for failures
//	harness/jsonptr      JSON pointers
//
// Imports: the standard library, faults, harness/report, harness/capture
// and harness/jsonptr — never Docker, testcontainers, the MCP SDK, database
// drivers or a browser (a test keeps it so).
package harness
