//go:build !linux

package rpc

import "os/exec"

// setProcAttrs has nothing to set where the parent's death cannot be
// signalled to the child; the runner exits when its stdin closes.
func setProcAttrs(*exec.Cmd) {}
