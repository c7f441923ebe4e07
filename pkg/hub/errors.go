package hub

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrNotFound: the repository, revision or file does not exist (or is
	// private and the token does not grant access).
	ErrNotFound = errors.New("not found on the Hub")
	// ErrUnauthorized: the Hub refused the request (401/403), usually a
	// gated repository whose licence was not accepted or a missing token.
	ErrUnauthorized = errors.New("access denied by the Hub")
	// ErrNotCached: offline mode (or an unreachable Hub) and the cache lacks
	// what the reference needs.
	ErrNotCached = errors.New("not in the local cache")
	// ErrChecksum: a downloaded file does not match the hash the Hub reported.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrQuantNotFound: the requested quant is not among the repo's GGUF files.
	ErrQuantNotFound = errors.New("quant not found")
	// ErrUnsafePath: a file name from the server would escape the cache.
	ErrUnsafePath = errors.New("unsafe file path")
	// ErrBadReference: the model reference cannot be parsed.
	ErrBadReference = errors.New("invalid model reference")
	// ErrUnknownModel: a bare name (no org/) that is neither an alias nor a
	// local file, such as another service's model name ("gpt-4o-mini"): a
	// model that does not exist here rather than a malformed reference. It
	// is also an ErrBadReference.
	ErrUnknownModel error = unknownModelError{}
	// ErrNoWeights: the repository holds neither GGUF nor safetensors weights.
	ErrNoWeights = errors.New("no usable model weights")
)

// unknownModelError is ErrUnknownModel: an ErrBadReference by errors.Is.
type unknownModelError struct{}

func (unknownModelError) Error() string { return "unknown model" }

func (unknownModelError) Is(target error) bool { return target == ErrBadReference }

// HTTPError is a failed Hub request; it unwraps to ErrNotFound or
// ErrUnauthorized where the status says so.
type HTTPError struct {
	Status  int
	Code    string // the Hub's X-Error-Code header (GatedRepo, RepoNotFound, ...)
	Message string // the Hub's X-Error-Message header or body excerpt
	URL     string
	What    string // what was being fetched, e.g. "repo Qwen/Qwen3-0.6B-GGUF"
	// RetryAfter is the server's Retry-After hint (0 if none).
	RetryAfter time.Duration
}

func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: HTTP %d", e.What, e.Status)
	switch {
	case e.Code == "RepoNotFound":
		b.WriteString(": repository not found (check the spelling; a private repo also needs HF_TOKEN)")
	case e.Status == 401 || e.Status == 403:
		if e.Code == "GatedRepo" || e.Status == 403 {
			b.WriteString(": the repository is gated or private; accept its licence on the Hub and set HF_TOKEN to a token with access")
		} else {
			b.WriteString(": authentication required; set HF_TOKEN (or log in so $HF_HOME/token exists)")
		}
	case e.Status == 404:
		switch e.Code {
		case "RevisionNotFound":
			b.WriteString(": revision not found")
		case "EntryNotFound":
			b.WriteString(": file not found in the repository")
		default:
			b.WriteString(": repository, revision or file not found (check the spelling; private repos also need HF_TOKEN)")
		}
	case e.Status == 429:
		b.WriteString(": rate limited by the Hub; try again later or set HF_TOKEN")
	case e.Status >= 500:
		b.WriteString(": the Hub is having trouble; try again later")
	}
	if e.Message != "" {
		fmt.Fprintf(&b, " (server said: %s)", e.Message)
	}
	return b.String()
}

// Unwrap maps the status to a sentinel error.
func (e *HTTPError) Unwrap() error {
	switch {
	case e.Code == "RepoNotFound" || e.Status == 404:
		return ErrNotFound
	case e.Status == 401 || e.Status == 403:
		return ErrUnauthorized
	}
	return nil
}

func (e *HTTPError) retryable() bool { return e.Status == 429 || e.Status >= 500 }

// QuantError lists the quants a repository does have.
type QuantError struct {
	Repo      string
	Want      string
	Available []string
	Ambiguous []string // files matching a partial name, when more than one did
}

func (e *QuantError) Error() string {
	if len(e.Ambiguous) > 0 {
		return fmt.Sprintf("quant %q is ambiguous in %s: it matches %s; give the full quant name",
			e.Want, e.Repo, strings.Join(e.Ambiguous, ", "))
	}
	have := "none"
	if len(e.Available) > 0 {
		have = strings.Join(e.Available, ", ")
	}
	return fmt.Sprintf("quant %q not found in %s; available quants: %s", e.Want, e.Repo, have)
}

// Unwrap makes errors.Is(err, ErrQuantNotFound) true.
func (e *QuantError) Unwrap() error { return ErrQuantNotFound }

// MissingPathError is a local model path that does not exist. It matches
// both ErrBadReference and fs.ErrNotExist.
type MissingPathError struct{ Path string }

func (e *MissingPathError) Error() string {
	return e.Path + " does not exist: check the path (a Hub model is org/name[:QUANT]; `helexa list` shows the cached ones)"
}

// Is makes errors.Is(err, ErrBadReference) and errors.Is(err, fs.ErrNotExist) true.
func (e *MissingPathError) Is(target error) bool {
	return target == ErrBadReference || target == fs.ErrNotExist
}
