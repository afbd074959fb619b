// Package harness runs attempts of a write tool through a fault proxy and
// measures their effects.
//
// The nouns: an [Operation] is one logical intent with a stable idempotency
// key and a unique marker; a [Call] is that operation rendered for a [Tool];
// an attempt is one transmission of a call on a connection the harness owns,
// with a three-valued [Outcome]; an [Oracle] counts the effects that carry a
// marker, queried directly and never through the proxy. A [Session] ties a tool
// to its proxy for a whole run, checks with [Session.Preflight] that the tool
// and oracle agree before anything is judged, and records every attempt.
//
// The report model ([Report]) and its text and JSON renderings live here too,
// so that every front end prints the same verdicts. A tool's report may carry
// the result of package harness/lint, which reads what the model reads about
// the tool; harness imports lint, never the other way round.
package harness
