package harness_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/harness/report"
)

// TestFaultPhasesAreReportPhases ties package faults' phases to the
// report's: the session copies a fault's phase into the attempt record, and
// a phase the report does not know would be drawn as nothing.
func TestFaultPhasesAreReportPhases(t *testing.T) {
	var got []report.Phase
	for _, p := range faults.Phases() {
		got = append(got, report.Phase(p))
	}
	assert.Equal(t, report.Phases(), got)
}
