package report

import _ "embed"

// ReportSchema is the JSON Schema (draft 2020-12) of the JSON report,
// version ReportVersion. It is published as harness/report.schema.json.
//
//go:embed report.schema.json
var ReportSchema string
