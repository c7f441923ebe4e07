//go:build !unix

package main

import (
	"errors"
	"os"
	"syscall"
)

var errNoDaemon = errors.New("background daemons (--detach/--stop) are only supported on Unix; run `helexa serve` in a terminal")

func detachedProcAttr() *syscall.SysProcAttr { return nil }

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p != nil
}

func isRecordedProcess(pidRecord) bool { return true }

func processStart(int) string { return "" }

func terminate(int) error { return errNoDaemon }
