// Package scenarios certifies write tools: each scenario is a rapid property
// that draws a whole fault plan, has the harness execute it against the tool,
// and checks with the tool's oracle that the side effect happened exactly
// once. A failing plan is shrunk to a minimal one and reported with the
// attempt log that shows the duplicate.
//
// The scenarios, by stable id:
//
//   - lost-response: the tool commits, the response is lost (1–3 times), the
//     retry is delivered. Exactly one effect; a further replay repeats the
//     retry's answer as the tool's contract says and adds nothing.
//   - pre-server-error: the request never (or only partly) reaches the tool
//     (1–3 times), then a retry is delivered. Exactly one effect.
//   - concurrent-duplicate: 2–16 attempts with one key released together
//     through a barrier, or a timed-out original held until its retry is sent
//     so both arrive together. Exactly one effect; every 2xx carries the same
//     result id; the profile's in-flight code (409) is acceptable; a settle
//     retry returns 2xx with the winner's result id.
//   - key-mismatch: after a success, the same key with a different payload
//     must be refused with the profile's code and add no effect.
//   - distinct-keys: two operations whose requests differ only in the key
//     must make two effects: deduplicating on the payload is a bug.
//   - replay: retries of a completed operation repeat its first answer as the
//     profile says (status, body but its volatile fields, replay headers; the
//     replayed header on replays only), refusals included where the profile
//     stores them (provoked with the tool's error_body).
//   - missing-key: where the profile requires a key, a request without one
//     is refused with the profile's code and makes no effect (HTTP tools).
//   - retention: where the tool declares a retention, a retry after a drawn
//     wait up to min(retention, Config.MaxWait) gets the replay.
//   - crash-restart: tools onceproof can kill (containers, stdio MCP
//     servers). The tool commits, is killed before its response is
//     delivered, restarts, and the retry arrives. Exactly one effect.
//   - dependency-fault: containers whose database link is proxied. The link
//     is reset or cut mid-request: no 2xx for an uncommitted write, exactly
//     one effect after retries.
//   - downstream: tools with a downstream section. Their calls to the
//     provider onceproof plays meet lost responses, resets or 503s: the
//     provider performs exactly one effect, every call carries a key, the
//     same on every retry.
//   - annotations: MCP tools that claim idempotentHint (a second identical
//     call adds no effect) or readOnlyHint (no effect at all).
//   - reconcile: tools with a lookup section. 1–3 ambiguous attempts
//     (committed with the response lost, or failed before the tool), each
//     followed before any retry by a lookup of the operation by its key:
//     "found" only for an operation the oracle counts once the answer
//     arrived, "not found" never for one the oracle counted before it was
//     sent; "unknown" is allowed, but a trial with only unknown answers
//     does not count. Then the delivered retry: exactly one effect.
//   - long-running: tools whose write (the trigger) starts an operation a
//     status call reports on. The trigger is delivered, has its response
//     lost and is retried, or arrives 2–4 times at once; 0–3 status polls
//     while it runs, polls until it finished, 0–2 after, maybe a retry of
//     the trigger. Exactly one operation started; every trigger answer
//     names the same operation; a poll never says an acknowledged
//     operation does not exist, never goes from finished back to running;
//     a retry after it finished returns the finished operation.
//
// Adding a scenario is one file holding its drawer (a function that draws a
// whole plan and returns the trial that runs it; key_mismatch.go is the
// model) and one row in the table in scenario.go, which names what a tool
// needs to run it. Everything else (All, ParseID, Applicable, the CLI's
// --scenario flag) is derived from the table; tests tie the report schema's
// enum, this comment and the README's scenario table to it.
//
// Every scenario judges the tool by its contract ([harness.ContractOf]):
// the profile's codes and replay semantics, and names the rule a
// counterexample broke ([report.Rule]); a 2xx for a write that never took
// effect is "acknowledged, no effect" wherever it is seen.
//
// Go test users call [Certify] (or [CertifyClient] for an agent's retry
// wrapper); the CLI calls [Run] and [RunClient].
//
// scenarios imports faults, harness, harness/capture and harness/report,
// and rapid; not the spec, containers, MCP or report renderers.
package scenarios
