// Package harnesstest provides what the tests of several onceproof packages
// share: a listener that never answers, a context cancelled once a wait
// begins, an oracle that counts nothing. Only tests import it.
//
// It may import the standard library, testify and package harness.
package harnesstest
