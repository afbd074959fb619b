//go:build !unix

package harness

import "os/exec"

// ownProcessGroup leaves cmd as it is where process groups are not
// available; WaitDelay still bounds the wait for its output.
func ownProcessGroup(cmd *exec.Cmd) {}
