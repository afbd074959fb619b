//go:build !unix

package scenarios

import "os/exec"

// ownProcessGroup does nothing where there are no process groups: the
// command alone is killed when its context ends.
func ownProcessGroup(*exec.Cmd) {}

// killProcessGroup does nothing where there are no process groups.
func killProcessGroup(*exec.Cmd) {}
