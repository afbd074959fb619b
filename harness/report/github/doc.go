// Package github renders a [report.Report] as GitHub Actions workflow
// commands ([Write]): one annotation per [report.Problem] — a lint finding,
// a failed or inconclusive scenario, a stale baseline entry, a tool that
// could not be certified — at its spec file and line, so that the problems
// show on the pull request's files and in the job's summary. Every value is
// escaped as the runner's command parser expects ([Escape], [EscapeProperty]):
// a tool's name or message cannot end the command or start another.
//
// Imports: the standard library and harness/report only.
package github
