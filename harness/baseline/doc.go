// Package baseline reads a file of known failing (tool, scenario) pairs
// ([Load]) and applies it to a report ([Baseline.Apply]), so that CI can
// adopt onceproof before every tool passes. Errors name the file, line and
// field and wrap [ErrBaseline].
//
// Imports: the standard library, yaml.v3 and harness/report.
package baseline
