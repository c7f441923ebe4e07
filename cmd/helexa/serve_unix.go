//go:build unix

package main

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// detachedProcAttr puts the daemon in its own session so it outlives the
// terminal that started it.
func detachedProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// processAlive reports whether pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// isHelexaProcess guards against a recycled pid: where /proc exists, the
// process must be a `serve` command.
func isHelexaProcess(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return true // no /proc (macOS, BSD): trust the pid file
	}
	return strings.Contains(string(b), "serve")
}

// terminate asks the process to shut down gracefully.
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
