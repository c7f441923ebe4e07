package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/pkg/api"
)

// daemonTarget is the daemon a client command talks to and why that one.
type daemonTarget struct {
	Addr string // host:port or URL, as given or recorded
	From string // where Addr came from: "--host", "$HELEXA_HOST", the pid file, "the default address"
	// Recorded is the detached daemon the pid file names, when one runs
	// (whatever Addr was picked); PIDFile is that file.
	Recorded *pidRecord
	PIDFile  string
}

// pickDaemon chooses the daemon a client command talks to: --host, else
// HELEXA_HOST, else the address the running detached daemon recorded in
// its pid file (so `serve --detach --host ADDR` needs no HELEXA_HOST
// afterwards), else the default address.
func pickDaemon(host string) daemonTarget {
	var t daemonTarget
	if r, path, ok := recordedDaemon(); ok {
		t.Recorded, t.PIDFile = &r, path
	}
	switch {
	case host != "":
		t.Addr, t.From = host, "--host"
	case envvars.Host.IsSet():
		t.Addr, t.From = envvars.Host.Get(), "$"+envvars.Host.Name
	case t.Recorded != nil:
		t.Addr, t.From = t.Recorded.Addr, fmt.Sprintf("the pid file %s (pid %d)", t.PIDFile, t.Recorded.PID)
	default:
		t.Addr, t.From = envvars.Host.Default, "the default address"
	}
	return t
}

// recordedDaemon is the detached daemon the pid file names, when that
// process still runs.
func recordedDaemon() (pidRecord, string, bool) {
	dir, err := daemonStateDir()
	if err != nil {
		return pidRecord{}, "", false
	}
	path := filepath.Join(dir, daemonPIDFile)
	r, err := readPIDFile(path)
	if err != nil || r.Addr == "" || !processAlive(r.PID) || !isRecordedProcess(r) {
		return pidRecord{}, "", false
	}
	return r, path, true
}

// client returns a client for the target with HELEXA_API_KEY.
func (t daemonTarget) client() (*api.Client, error) {
	c, err := api.NewClient(t.Addr, envvars.APIKey.Get())
	if err != nil {
		return nil, fmt.Errorf("daemon address from %s: %w", t.From, err)
	}
	return c, nil
}

// describe is the --verbose line naming the daemon and why it was picked.
func (t daemonTarget) describe(c *api.Client) string {
	return fmt.Sprintf("using the helexa daemon at %s (from %s)", c.Addr(), t.From)
}

// daemonClient returns a client for the daemon pickDaemon chooses,
// saying which on verbose (nil: quiet).
func daemonClient(host string, verbose io.Writer) (*api.Client, daemonTarget, error) {
	t := pickDaemon(host)
	c, err := t.client()
	if err != nil {
		return nil, t, err
	}
	if verbose != nil {
		fmt.Fprintln(verbose, t.describe(c))
	}
	return c, t, nil
}

// daemonError rewrites "nobody answers" into advice: the detached daemon
// that runs elsewhere, or how to start one.
func daemonError(t daemonTarget, c *api.Client, err error) error {
	if !errors.Is(err, api.ErrUnreachable) {
		return err
	}
	return fmt.Errorf("no helexa daemon answers at %s (from %s): %s", c.Addr(), t.From, t.advice(c))
}

// advice is what to do when no daemon answers at the target.
func (t daemonTarget) advice(c *api.Client) string {
	r := t.Recorded
	if r == nil {
		return "start one with `helexa serve --detach` (or point HELEXA_HOST / --host at a running one)"
	}
	if rc, err := api.NewClient(r.Addr, ""); err == nil && rc.Addr() != c.Addr() && t.From == "--host" {
		return fmt.Sprintf("the detached daemon (pid %d) listens on %s: pass --host %s to use it", r.PID, r.Addr, r.Addr)
	}
	if rc, err := api.NewClient(r.Addr, ""); err == nil && rc.Addr() != c.Addr() {
		return fmt.Sprintf("the detached daemon (pid %d) listens on %s: pass --host %s, or unset %s to use it", r.PID, r.Addr, r.Addr, envvars.Host.Name)
	}
	return fmt.Sprintf("the detached daemon (pid %d) runs but does not answer; see its log %s, or restart it with `helexa serve --stop` and `helexa serve --detach`",
		r.PID, filepath.Join(filepath.Dir(t.PIDFile), daemonLogFile))
}
