package repro

import (
	"time"

	"github.com/onceproof/onceproof/harness/report"
)

// Quote quotes s as one bash word (single quotes): what a transport's own
// reproducer puts in its script goes through it.
func Quote(s string) string { return quote(s) }

// Seconds spells d as bash's sleep and timeout take it (2s when d is not
// positive).
func Seconds(d time.Duration) string { return seconds(d) }

// Describe says in one line what an attempt met and what onceproof saw.
func Describe(a report.Attempt) string { return describe(a) }
