package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/helexa/helexa/pkg/hub"
)

// userError is an error as the user reads it: what failed, why and what
// to do, said once. cause keeps the whole chain, which --verbose prints.
type userError struct {
	msg   string
	cause error
}

func (e *userError) Error() string { return e.msg }
func (e *userError) Unwrap() error { return e.cause }

// modelError rewords a failure to resolve, pull or load the model ref for
// the user. verb ("loading", "pull") prefixes the message only when the
// message does not already name the model. Cancellation passes through
// unchanged, so the exit status still sees it.
func modelError(verb, ref string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ue *hub.UnreachableError
	if errors.As(err, &ue) {
		if ue.What != "" {
			return &userError{ue.Error(), err}
		}
		return &userError{fmt.Sprintf("%s is not in the local cache and %s", ref, ue.Error()), err}
	}
	var mp *hub.MissingPathError
	if errors.As(err, &mp) {
		return &userError{mp.Error(), err}
	}
	names := refNames(ref)
	var pe *fs.PathError
	if errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) && mentionsAny(pe.Path, names) {
		if strings.HasPrefix(verb, "debug") { // files only: no Hub references
			return &userError{ref + " does not exist: check the path", err}
		}
		return &userError{(&hub.MissingPathError{Path: ref}).Error(), err}
	}
	msg := dropEchoes(sayOnce(err, names), names)
	if rest, ok := strings.CutPrefix(msg, "cannot reach "); ok { // a daemon's hub said it
		msg = ref + " is not in the local cache and cannot reach " + rest
	}
	if !mentionsAny(msg, names) {
		msg = verb + " " + ref + ": " + msg
	}
	return &userError{msg, err}
}

// refNames are the spellings of ref an error message may use: as typed,
// its repo without :QUANT or @REVISION, and, for a path, the absolute path.
func refNames(ref string) []string {
	names := []string{ref}
	if i := strings.IndexAny(ref, ":@"); i > 0 {
		names = append(names, ref[:i])
	}
	if r, err := hub.ParseRef(ref, hub.BuiltinAliases()); err == nil && r.Repo != "" && r.Alias != "" {
		names = append(names, r.Repo) // the messages about an alias name its repository
	}
	for _, n := range names {
		if abs, err := filepath.Abs(n); err == nil && abs != n {
			names = append(names, abs)
		}
	}
	return names
}

// mentionsAny reports whether msg names one of names as a whole word (not
// "d" inside "invalid").
func mentionsAny(msg string, names []string) bool {
	for _, n := range names {
		for i := 0; n != ""; {
			j := strings.Index(msg[i:], n)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(n)
			if (start == 0 || !wordByte(msg[start-1])) && (end == len(msg) || !wordByte(msg[end])) {
				return true
			}
			i = start + 1
		}
	}
	return false
}

func wordByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c == '/' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// sayOnce drops the wrappers that only put a prefix before what the error
// below them says, while that error still names the model: "loading X:
// opening X failed: invalid GGUF file: X is 3 bytes" is said from
// "invalid GGUF file". A wrapper that adds after the inner text (a hint) is
// kept, and a raw Go error (a path, URL or network error) is never what is
// left, since its words are for programmers.
func sayOnce(err error, names []string) string {
	e := err
	for {
		inner := errors.Unwrap(e)
		if inner == nil || rawGoError(inner) || !strings.HasSuffix(e.Error(), inner.Error()) || !mentionsAny(inner.Error(), names) {
			return e.Error()
		}
		e = inner
	}
}

// listenError says why serve cannot listen on addr, most often a daemon
// already there.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return &userError{fmt.Sprintf("cannot listen on %s: the address is in use (by another helexa serve? `helexa serve --stop` stops the detached one; --host picks another address)", addr), err}
	}
	return &userError{fmt.Sprintf("cannot listen on %s: %s", addr, rootCause(err)), err}
}

// rootCause is the innermost error's text: "permission denied" rather
// than "listen tcp 127.0.0.1:80: bind: permission denied".
func rootCause(err error) string {
	for inner := errors.Unwrap(err); inner != nil; inner = errors.Unwrap(inner) {
		err = inner
	}
	return err.Error()
}

// dropEchoes is sayOnce for an error that arrives as text (a daemon's
// answer): it drops leading "pulling X: ", "opening X failed: " and the
// like — a few words naming the model — while the rest names it too.
func dropEchoes(msg string, names []string) string {
	for {
		head, rest, ok := strings.Cut(msg, ": ")
		if !ok || len(strings.Fields(head)) > 3 || !mentionsAny(head, names) || !(mentionsAny(rest, names) || strings.HasPrefix(rest, "cannot reach ")) {
			return msg
		}
		msg = rest
	}
}

// unknownCommand puts cobra's several-line "unknown command" error,
// with its suggestions, on one line.
func unknownCommand(err error) error {
	msg := err.Error()
	if !strings.HasPrefix(msg, "unknown command ") {
		return err
	}
	first, rest, _ := strings.Cut(msg, "\n")
	first = strings.TrimSuffix(first, ` for "helexa"`)
	if _, sugg, ok := strings.Cut(rest, "Did you mean this?\n"); ok {
		var names []string
		for _, l := range strings.Split(sugg, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				names = append(names, l)
			}
		}
		if len(names) > 0 {
			first += " (did you mean " + strings.Join(names, " or ") + "?)"
		}
	}
	return errors.New(first + "; `helexa --help` lists the commands")
}

// rawGoError reports the standard library's error types whose text is
// written for programmers.
func rawGoError(err error) bool {
	switch err.(type) {
	case *fs.PathError, *url.Error, *net.OpError, *net.DNSError, *os.SyscallError:
		return true
	}
	return false
}

// exitStatus reports err on stderr and picks the exit status: 0 on
// success, 130 (like a shell) when Ctrl+C or SIGTERM cancelled the command
// — quietly, since the user asked for it — and 1 for any other error.
// verbose (the command's --verbose, or HELEXA_LOG_LEVEL=debug) adds the
// full chain of causes under a reworded message.
func exitStatus(ctx context.Context, err error, stderr io.Writer, verbose bool) int {
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		return 130
	}
	fmt.Fprintln(stderr, "Error:", unknownCommand(err))
	var ue *userError
	if verbose && errors.As(err, &ue) && ue.cause != nil {
		if cause := ue.cause.Error(); cause != ue.msg {
			fmt.Fprintln(stderr, "Cause:", cause)
		}
		var un *hub.UnreachableError
		if errors.As(ue.cause, &un) && un.Err != nil {
			fmt.Fprintln(stderr, "Network error:", un.Err)
		}
	}
	return 1
}
