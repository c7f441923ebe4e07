package api

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/gin-gonic/gin"
)

// Guard is what keeps web pages the user visits from driving a daemon on
// localhost (CSRF, DNS rebinding): which Host headers and browser Origins
// are accepted.
type Guard struct {
	// BindHost is the host part of the address the daemon listens on. A
	// daemon bound to a non-loopback address accepts any Host when it has
	// an API key, and address literals (not names) without one.
	BindHost string
	// AllowedHosts are extra Host names accepted besides loopback
	// addresses, localhost and BindHost (HELEXA_ALLOWED_HOSTS).
	AllowedHosts []string
	// Origins are extra browser origins accepted besides localhost ones
	// (HELEXA_ORIGINS): "https://app.example.com", "http://*.example.com",
	// "chrome-extension://*", or "*" for any.
	Origins []string
}

// defaultOrigins are the browser origins a local daemon always accepts:
// pages served from this machine.
var defaultOrigins = []string{
	"http://localhost", "https://localhost", "http://localhost:*", "https://localhost:*",
	"http://127.0.0.1", "https://127.0.0.1", "http://127.0.0.1:*", "https://127.0.0.1:*",
	"http://[::1]", "https://[::1]", "http://[::1]:*", "https://[::1]:*",
}

// ParseList splits a comma-separated environment value, dropping blanks.
func ParseList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// hostAllowed reports whether a request's Host header names this daemon.
// keyed is whether the daemon requires an API key.
func (g *Guard) hostAllowed(hostport string, keyed bool) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if isLoopbackName(host) || (g.BindHost != "" && strings.EqualFold(host, strings.Trim(g.BindHost, "[]"))) {
		return true
	}
	for _, h := range g.AllowedHosts {
		if strings.EqualFold(strings.Trim(h, "[]"), host) {
			return true
		}
	}
	if g.BindHost == "" || isLoopbackName(g.BindHost) {
		return false
	}
	// Reachable from the network. With an API key any name is fine (a web
	// page cannot send the key). Without one (--insecure), an address
	// literal is accepted, since DNS rebinding needs a name: a rebound name
	// would let any web page the user visits drive the daemon.
	return keyed || net.ParseIP(host) != nil
}

func isLoopbackName(host string) bool {
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// originAllowed reports whether a browser Origin may call the API. An
// origin is scheme://host[:port], nothing more; an IPv6 literal such as
// [::1] is a host like any other.
func (g *Guard) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		(u.Path != "" && u.Path != "/") {
		return false
	}
	origin = strings.ToLower(strings.TrimSuffix(origin, "/"))
	for _, p := range append(append([]string(nil), defaultOrigins...), g.Origins...) {
		if p == "*" || originMatch(strings.ToLower(p), origin) {
			return true
		}
	}
	return false
}

// originMatch matches an origin against a pattern that is literal except
// for "*", which stands for one or more characters of a host name or port
// (letters, digits, '.', '-'): "http://localhost:*", "https://*.example.com",
// "chrome-extension://*". Nothing else is special, so "[::1]" is the IPv6
// loopback, not a character class.
func originMatch(pattern, origin string) bool {
	head, rest, wild := strings.Cut(pattern, "*")
	if !wild {
		return pattern == origin
	}
	if !strings.HasPrefix(origin, head) {
		return false
	}
	origin = origin[len(head):]
	// The star takes a run of host characters; try every length, so a
	// pattern with several stars still matches exactly.
	for n := 1; n <= len(origin) && isHostChar(origin[n-1]); n++ {
		if originMatch(rest, origin[n:]) {
			return true
		}
	}
	return false
}

func isHostChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-'
}

// guard refuses requests whose Host does not name the daemon and browser
// requests from origins that are not allowed, answers CORS preflights for
// allowed origins, and requires JSON bodies to say so: a page in the
// user's browser can then neither read from nor write to the daemon.
func (s *Server) guard(c *gin.Context) {
	g := &s.cfg.Guard
	r := c.Request
	if !g.hostAllowed(r.Host, s.cfg.APIKey != "") {
		s.refuse(c, http.StatusForbidden, fmt.Sprintf(
			"Host %q is not this daemon's: requests must name a loopback address (add the name to HELEXA_ALLOWED_HOSTS to accept it)", r.Host))
		return
	}
	origin := r.Header.Get("Origin")
	if origin != "" {
		if !g.originAllowed(origin) {
			s.refuse(c, http.StatusForbidden, fmt.Sprintf(
				"browser origin %q may not use this daemon (allow it with HELEXA_ORIGINS)", origin))
			return
		}
		h := c.Writer.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		// Clients back off on a 503 by Retry-After, which a page can only
		// read when it is exposed.
		h.Set("Access-Control-Expose-Headers", "Retry-After")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", preflightHeaders(r.Header.Get("Access-Control-Request-Headers")))
			h.Add("Vary", "Access-Control-Request-Headers")
			h.Set("Access-Control-Max-Age", "600")
			c.AbortWithStatus(http.StatusNoContent)
			return
		}
	}
	if r.Method == http.MethodPost && !isJSON(r.Header.Get("Content-Type")) {
		s.refuse(c, http.StatusUnsupportedMediaType, fmt.Sprintf(
			"request body has Content-Type %q; send JSON with \"Content-Type: application/json\"", r.Header.Get("Content-Type")))
		return
	}
}

// isJSON accepts application/json and application/*+json with parameters.
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

func (s *Server) refuse(c *gin.Context, status int, msg string) {
	s.log.Warn("request refused", "method", c.Request.Method, "path", c.Request.URL.Path, "host", c.Request.Host,
		"origin", c.Request.Header.Get("Origin"), "reason", msg)
	code := "forbidden"
	if status == http.StatusUnsupportedMediaType {
		code = "unsupported_media_type"
	}
	s.writeError(c, status, ErrorBody{Message: msg, Type: "invalid_request_error", Code: code})
	c.Abort()
}

// localPath matches an absolute file-system path of two or more elements.
var localPath = regexp.MustCompile(`(?:/[\w.@+~-]+){2,}/?`)

// clientError is errorResponse for the request's client: a client on
// another machine never sees local paths or file details (they stay in
// the daemon's log); a local client sees the whole message.
func (s *Server) clientError(c *gin.Context, err error) (int, ErrorResponse) {
	status, body := errorResponse(err)
	if isLoopbackAddr(c.Request.RemoteAddr) {
		return status, body
	}
	if status >= 500 {
		body.Error.Message = "internal error; the daemon's log has the details"
	} else {
		body.Error.Message = localPath.ReplaceAllString(body.Error.Message, "[path]")
	}
	return status, body
}

func isLoopbackAddr(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// preflightHeaders is the Access-Control-Allow-Headers of a preflight from
// an allowed origin: the headers it asks for (browser SDKs send their own,
// such as the OpenAI SDK's X-Stainless-* and OpenAI-Organization), or the
// two every client needs. Only tokens are echoed, never other bytes.
func preflightHeaders(asked string) string {
	var out []string
	for _, h := range strings.Split(asked, ",") {
		if h = strings.TrimSpace(h); h != "" && headerToken.MatchString(h) {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return "Authorization, Content-Type"
	}
	return strings.Join(out, ", ")
}

// headerToken matches an HTTP header name.
var headerToken = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`)
