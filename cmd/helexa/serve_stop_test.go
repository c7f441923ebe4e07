//go:build linux

package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/envvars"
)

// TestStopNeverKillsAnotherProcess: `serve --stop` kills only the process
// the pid file recorded (same executable, same start time), not whatever
// now has that pid, even when its command line says "serve".
func TestStopNeverKillsAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(envvars.StateDir.Name, dir)
	other := exec.Command("sh", "-c", "sleep 60", "serve")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	for _, rec := range []pidRecord{
		{PID: other.Process.Pid, Addr: "127.0.0.1:13131"}, // an old pid file: no identity
		{PID: other.Process.Pid, Addr: "127.0.0.1:13131", Exe: "/usr/local/bin/helexa", Start: processStart(other.Process.Pid)},
		{PID: other.Process.Pid, Addr: "127.0.0.1:13131", Exe: "/bin/sh", Start: "1"},
	} {
		if err := writePIDFile(filepath.Join(dir, daemonPIDFile), rec); err != nil {
			t.Fatal(err)
		}
		err := runServe(context.Background(), serveOptions{Stop: true}, streams{})
		if err == nil || !strings.Contains(err.Error(), "not the recorded daemon") {
			t.Fatalf("stop with %+v: %v", rec, err)
		}
		if !processAlive(other.Process.Pid) {
			t.Fatalf("stop with %+v killed an unrelated process", rec)
		}
	}
	if r := selfRecord("x"); !isRecordedProcess(r) {
		t.Errorf("this process does not match its own record %+v", r)
	}
}
