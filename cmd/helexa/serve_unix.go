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

// isRecordedProcess guards against a recycled pid: where /proc exists,
// the process must run the recorded executable and have started at the
// recorded time. A record without them (an old pid file) is not trusted.
func isRecordedProcess(r pidRecord) bool {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return true // no /proc (macOS, BSD): trust the pid file
	}
	if r.Exe == "" || r.Start == "" {
		return false
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(r.PID) + "/exe")
	if err != nil && !errors.Is(err, os.ErrPermission) {
		return false
	}
	return (err != nil || strings.TrimSuffix(exe, " (deleted)") == r.Exe) && processStart(r.PID) == r.Start
}

// processStart is a process's start time in clock ticks since boot
// (/proc/PID/stat field 22), "" where unknown.
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19] // fields after the command start at field 3
}

// terminate asks the process to shut down gracefully.
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
