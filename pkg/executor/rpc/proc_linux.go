package rpc

import (
	"os/exec"
	"syscall"
)

// setProcAttrs makes the runner die with its parent, so a crashed daemon
// leaves no runner behind.
func setProcAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
