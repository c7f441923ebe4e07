package rpc

import (
	"os/exec"
	"syscall"
)

// setProcAttrs makes the runner die with its parent, so a crashed daemon
// leaves no runner behind, and puts it in its own process group, so Ctrl+C
// in the daemon's terminal reaches only the daemon (which closes its
// runners itself).
func setProcAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
