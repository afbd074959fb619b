// Package scenarios certifies write tools: each scenario is a rapid property
// that draws a whole fault plan, has the harness execute it against the tool,
// and checks with the tool's oracle that the side effect happened exactly
// once. A failing plan is shrunk to a minimal one and reported with the
// attempt log that shows the duplicate.
//
// The scenarios, by stable id:
//
//   - lost-response: the tool commits, the response is lost (1–3 times), the
//     retry is delivered. Exactly one effect; a further replay returns the
//     same status and result id and adds nothing.
//   - pre-server-error: the request never (or only partly) reaches the tool
//     (1–3 times), then a retry is delivered. Exactly one effect.
//   - concurrent-duplicate: 2–16 attempts with one key released together
//     through a barrier, or a timed-out original held until its retry is sent
//     so both arrive together. Exactly one effect; every 2xx carries the same
//     result id; 409 while in flight is acceptable; a settle retry returns
//     2xx with the winner's result id.
//   - key-mismatch: after a success, the same key with a different payload
//     must be refused with a 4xx and add no effect.
//   - distinct-keys: two operations whose requests differ only in the key
//     must make two effects: deduplicating on the payload is a bug.
//
// Go test users call [Certify]; the CLI calls [Run].
package scenarios
