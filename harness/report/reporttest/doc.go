// Package reporttest holds sample reports shared by the tests of the
// report packages and their front ends. Only tests import it.
//
// Imports: harness/report, harness/spec, harness/lint and testify.
package reporttest
