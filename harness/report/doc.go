// Package report is the model of a certification's results — [Report],
// [ToolReport], [ScenarioReport], [Counterexample], [Attempt] — with its
// JSON encoding (described by [ReportSchema]), text, Markdown and JUnit
// renderings, certificates, the rules a counterexample can break ([Rule])
// and the idempotency contract a tool is judged by ([Contract]). An
// attempt's fault phase ([Phase]) and failure ([Failure]) are typed fields,
// so every renderer draws from them, never from text.
//
// One package per further output format renders this model (report/html).
//
// Imports: the standard library and harness/jsonptr only.
package report
