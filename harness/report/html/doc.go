// Package html renders a [report.Report] as one self-contained HTML page
// ([Write]): the verdict matrix, and for each failure the rule it broke and
// a timeline of the shrunk counterexample, drawn from the attempts' typed
// phases and failures. Its templates and CSS are embedded files.
//
// Imports: the standard library and harness/report only.
package html
