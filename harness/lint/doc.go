// Package lint reads what a model reads about a write tool — an MCP tool's
// name, description, inputSchema and annotations, or what a spec declares
// for an HTTP tool (method, key header) — and reports what will make an agent
// duplicate its effects: a description that tells the model to mint a fresh
// idempotency key per call, an idempotentHint on a write that takes no key, a
// write under readOnlyHint, a key the schema lets be left out or empty.
//
// Every rule has a stable id, a severity and an explanation; [Rules] returns
// the table, in the order the README lists it. [MCP] and [HTTP] apply the
// rules to one tool and return a [Result]: the [Finding]s, the rules that
// were checked, and (set by the caller) the threshold the run fails at.
//
// Which parameter is the key: a property whose name, lower-cased with
// everything but letters and digits removed, contains "idempot"
// (idempotency_key, idempotencyKey, Idempotency-Key, x_idempotency_token), or
// is one of clienttoken and clientrequesttoken (AWS style), dedupkey,
// dedupekey, dedupid, deduplicationkey, deduplicationid and
// messagededuplicationid. Generic names — request_id, client_request_id,
// operation_id, request_key, request_token, nonce, unique_key, key — count
// only when their own description speaks of idempotency, deduplication,
// duplicates or retries (GCP's requestId does; a tracing request_id does
// not). A spec's key_argument names the key outright. Properties of nested
// objects are searched too (a key is optional when it or an object above it
// is).
//
// Dependencies: lint imports only the standard library and the MCP Go SDK
// (its Tool type). The report model in package harness imports lint (a
// tool's report carries a [*Result]), so lint must never import harness or
// anything that does; harness adapts its spec to [HTTPTool] and [MCPOptions].
package lint
