package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/fsutil"
	"github.com/helexa/helexa/pkg/api"
)

// Daemon files under the state directory.
const (
	daemonPIDFile = "serve.pid"
	daemonLogFile = "serve.log"
)

// daemonStateDir is HELEXA_STATE_DIR, $XDG_STATE_HOME/helexa or
// ~/.local/state/helexa, created if needed.
func daemonStateDir() (string, error) {
	dir := envvars.StateDir.Get()
	if dir == "" {
		if x := os.Getenv("XDG_STATE_HOME"); x != "" {
			dir = filepath.Join(x, "helexa")
		} else {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("no state directory: set %s: %w", envvars.StateDir.Name, err)
			}
			dir = filepath.Join(home, ".local", "state", "helexa")
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating state directory: %w", err)
	}
	return dir, nil
}

// pidRecord is what a daemon records about itself: enough to tell it from
// an unrelated process that later got the same pid.
type pidRecord struct {
	PID   int
	Addr  string
	Exe   string // the executable's path
	Start string // the process start time (/proc/PID/stat field 22), "" where unknown
}

// writePIDFile records the daemon ("PID\nADDR\nEXE\nSTART\n").
func writePIDFile(path string, r pidRecord) error {
	if err := fsutil.WriteFileAtomic(path, fmt.Appendf(nil, "%d\n%s\n%s\n%s\n", r.PID, r.Addr, r.Exe, r.Start), 0o600); err != nil {
		return fmt.Errorf("writing pid file: %w", err)
	}
	return nil
}

// selfRecord describes this process for the pid file.
func selfRecord(addr string) pidRecord {
	exe, _ := os.Executable()
	return pidRecord{PID: os.Getpid(), Addr: addr, Exe: exe, Start: processStart(os.Getpid())}
}

// readPIDFile returns what a daemon recorded.
func readPIDFile(path string) (pidRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return pidRecord{}, fmt.Errorf("reading the pid file: %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 0 || len(lines) < 2 {
		return pidRecord{}, fmt.Errorf("pid file %s is malformed; remove it", path)
	}
	r := pidRecord{PID: pid, Addr: strings.TrimSpace(lines[1])}
	if len(lines) >= 4 {
		r.Exe, r.Start = lines[2], lines[3]
	}
	return r, nil
}

// detachDaemon starts `helexa serve` in the background and waits until it
// answers /health.
func detachDaemon(ctx context.Context, opts serveOptions, s streams) error {
	if err := checkBind(opts.Host, envvars.APIKey.Get(), opts.Insecure); err != nil {
		return err
	}
	dir, err := daemonStateDir()
	if err != nil {
		return err
	}
	pidPath, logPath := filepath.Join(dir, daemonPIDFile), filepath.Join(dir, daemonLogFile)
	if r, err := readPIDFile(pidPath); err == nil && processAlive(r.PID) && isRecordedProcess(r) {
		return fmt.Errorf("a helexa daemon is already running (pid %d, %s); stop it with `helexa serve --stop`", r.PID, r.Addr)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the helexa binary: %w", err)
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening the daemon log: %w", err)
	}
	defer logf.Close()
	args := []string{"serve", "--host", opts.Host, "--pid-file", pidPath,
		"--shutdown-timeout", opts.ShutdownTimeout.String()}
	if opts.Device != "" {
		args = append(args, "--device", opts.Device)
	}
	if opts.Insecure {
		args = append(args, "--insecure")
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = detachedProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the daemon: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	client, err := api.NewClient(opts.Host, envvars.APIKey.Get())
	if err != nil {
		return err
	}
	if err := waitHealthy(ctx, client, exited, 60*time.Second); err != nil {
		return fmt.Errorf("%w\n%s", err, logTail(logPath, 10))
	}
	_, err = fmt.Fprintf(s.Out, "helexa daemon listening on %s (pid %d, log %s)\n", client.Addr(), cmd.Process.Pid, logPath)
	return err
}

// waitHealthy polls /health until it answers, the child exits or time runs out.
func waitHealthy(ctx context.Context, c *api.Client, exited <-chan error, limit time.Duration) error {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		hctx, cancel := context.WithTimeout(ctx, time.Second)
		err := c.Health(hctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case err := <-exited:
			if err == nil {
				err = errors.New("exit status 0")
			}
			return fmt.Errorf("the daemon exited before answering (%w); see its log below", err)
		case <-deadline.C:
			return fmt.Errorf("the daemon did not answer at %s within %s; see its log below", c.Addr(), limit)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// logTail returns the last n lines of a log file, indented.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, "  "+sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// stopDaemon stops the daemon recorded in the pid file and waits for it.
func stopDaemon(ctx context.Context, opts serveOptions, s streams) error {
	dir, err := daemonStateDir()
	if err != nil {
		return err
	}
	pidPath := filepath.Join(dir, daemonPIDFile)
	r, err := readPIDFile(pidPath)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no helexa daemon is running (no %s)", pidPath)
	}
	if err != nil {
		return err
	}
	pid, addr := r.PID, r.Addr
	if !processAlive(pid) || !isRecordedProcess(r) {
		_ = os.Remove(pidPath)
		return fmt.Errorf("no helexa daemon is running (removed the stale pid file for pid %d: that pid is not the recorded daemon)", pid)
	}
	if err := terminate(pid); err != nil {
		return fmt.Errorf("stopping pid %d: %w", pid, err)
	}
	limit := opts.ShutdownTimeout + 15*time.Second
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(limit)
	for processAlive(pid) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("the daemon (pid %d) did not exit within %s", pid, limit)
		case <-tick.C:
		}
	}
	_ = os.Remove(pidPath)
	_, err = fmt.Fprintf(s.Out, "stopped helexa daemon (pid %d, %s)\n", pid, addr)
	return err
}
