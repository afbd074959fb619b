// Package sarif renders a [report.Report] as SARIF 2.1.0 ([Write]), the
// format GitHub code scanning (github/codeql-action/upload-sarif) and other
// static-analysis viewers read: one run of the tool "onceproof", a rule per
// lint rule and scenario that has a problem, and a result per
// [report.Problem] located at its spec file and line. A failure a baseline
// lists is a suppressed result.
//
// Imports: the standard library and harness/report only.
package sarif
