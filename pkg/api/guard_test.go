package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/engine"
)

// TestGuard: a page in the user's browser (a foreign Origin, a rebound
// Host, a text/plain "simple request") cannot drive the daemon; local
// origins and configured names can, and preflights are answered for
// allowed origins only.
func TestGuard(t *testing.T) {
	f := &fakeService{deltas: stdDeltas(), result: stdResult()}
	ts := newTestServer(t, f, func(c *Config) {
		c.Guard = Guard{BindHost: "127.0.0.1", AllowedHosts: []string{"helexa.lan"}, Origins: []string{"https://app.example.com", "chrome-extension://*"}}
	})
	for _, tc := range []struct {
		name, method, path, body string
		headers                  map[string]string
		status                   int
		want                     string
	}{
		{"plain local request", "POST", "/v1/chat/completions", chatBody + "}", map[string]string{"Content-Type": "application/json"}, 200, ""},
		{"json with charset", "POST", "/api/unload", `{"model":"m"}`, map[string]string{"Content-Type": "application/json; charset=utf-8"}, 200, ""},
		{"text/plain simple request", "POST", "/api/unload", `{"model":"m"}`, map[string]string{"Content-Type": "text/plain"}, 415, "application/json"},
		{"form post", "POST", "/api/load", `model=m`, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "application/json"},
		{"no content type", "POST", "/api/pull", `{"model":"m"}`, nil, 415, "application/json"},
		{"foreign origin", "POST", "/api/unload", `{"model":"m"}`, map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example"}, 403, "HELEXA_ORIGINS"},
		{"foreign origin GET", "GET", "/api/ps", "", map[string]string{"Origin": "https://evil.example"}, 403, "HELEXA_ORIGINS"},
		{"null origin", "GET", "/api/ps", "", map[string]string{"Origin": "null"}, 403, "HELEXA_ORIGINS"},
		{"rebound host", "GET", "/api/ps", "", map[string]string{"Host": "evil.example:13131"}, 403, "HELEXA_ALLOWED_HOSTS"},
		{"rebound host POST", "POST", "/api/unload", `{"model":"m"}`, map[string]string{"Host": "evil.example", "Content-Type": "application/json"}, 403, "HELEXA_ALLOWED_HOSTS"},
		{"localhost host", "GET", "/api/ps", "", map[string]string{"Host": "localhost:13131"}, 200, ""},
		{"ipv6 loopback host", "GET", "/api/ps", "", map[string]string{"Host": "[::1]:13131"}, 200, ""},
		{"configured host", "GET", "/api/ps", "", map[string]string{"Host": "helexa.lan:13131"}, 200, ""},
		{"localhost origin", "GET", "/api/ps", "", map[string]string{"Origin": "http://localhost:3000"}, 200, ""},
		{"configured origin", "GET", "/api/ps", "", map[string]string{"Origin": "https://app.example.com"}, 200, ""},
		{"wildcard origin", "GET", "/api/ps", "", map[string]string{"Origin": "chrome-extension://abcdef"}, 200, ""},
		{"preflight allowed", "OPTIONS", "/v1/chat/completions", "", map[string]string{"Origin": "http://127.0.0.1:8080", "Access-Control-Request-Method": "POST"}, 204, ""},
		{"preflight refused", "OPTIONS", "/v1/chat/completions", "", map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}, 403, "HELEXA_ORIGINS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
			for k, v := range tc.headers {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
				t.Fatalf("status %d %s, want %d mentioning %q", resp.StatusCode, b, tc.status, tc.want)
			}
			if origin := tc.headers["Origin"]; resp.StatusCode < 300 && origin != "" {
				if got := resp.Header.Get("Access-Control-Allow-Origin"); got != origin {
					t.Errorf("Access-Control-Allow-Origin %q, want %q", got, origin)
				}
				if got := resp.Header.Get("Access-Control-Expose-Headers"); got != "Retry-After" {
					t.Errorf("Access-Control-Expose-Headers %q, want Retry-After", got)
				}
			}
		})
	}
}

func TestGuardNonLoopbackBind(t *testing.T) {
	tests := []struct {
		bind  string
		keyed bool
		host  string
		want  bool
	}{
		{"0.0.0.0", true, "192.168.1.5:13131", true},
		{"0.0.0.0", true, "box.lan", true}, // the API key protects it
		{"0.0.0.0", false, "192.168.1.5:13131", true},
		{"0.0.0.0", false, "[fe80::1]:13131", true},
		{"0.0.0.0", false, "rebound.evil.example:13131", false}, // --insecure: names could be rebound
		{"0.0.0.0", false, "helexa.lan", true},                  // in AllowedHosts
		{"192.168.1.5", false, "192.168.1.5:13131", true},
		{"127.0.0.1", false, "192.168.1.5:13131", false},
		{"127.0.0.1", true, "box.lan", false},
		{"", false, "localhost:13131", true},
	}
	for _, tt := range tests {
		g := Guard{BindHost: tt.bind, AllowedHosts: []string{"helexa.lan"}}
		if got := g.hostAllowed(tt.host, tt.keyed); got != tt.want {
			t.Errorf("bound to %q (API key %v): Host %q allowed = %v, want %v", tt.bind, tt.keyed, tt.host, got, tt.want)
		}
	}
}

// TestRemoteClientsSeeNoLocalPaths: errors for a client on another machine
// carry no local paths, and internal errors no details.
func TestRemoteClientsSeeNoLocalPaths(t *testing.T) {
	f := &fakeService{err: engine.Errorf(engine.KindBadRequest, "opening /home/alice/models/secret.gguf failed: bad magic")}
	s, err := NewServer(Config{Service: f, Logger: slog.New(slog.DiscardHandler), Guard: Guard{BindHost: "0.0.0.0"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		remote, want, not string
	}{
		{"192.0.2.7:5000", "opening [path] failed", "alice"},
		{"127.0.0.1:5000", "/home/alice/models/secret.gguf", "[path]"},
	} {
		req := httptest.NewRequest("POST", "/v1/completions", strings.NewReader(`{"model":"m","prompt":"x"}`))
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr, req.Host = tc.remote, "192.0.2.1:13131"
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, req)
		if b := w.Body.String(); !strings.Contains(b, tc.want) || strings.Contains(b, tc.not) {
			t.Errorf("client %s: %s, want %q and no %q", tc.remote, b, tc.want, tc.not)
		}
	}
	f.err = engine.Errorf(engine.KindInternal, "mmap /srv/m.gguf: cannot allocate memory")
	req := httptest.NewRequest("POST", "/v1/completions", strings.NewReader(`{"model":"m","prompt":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr, req.Host = "192.0.2.7:5000", "192.0.2.1:13131"
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	if b := w.Body.String(); w.Code != 500 || strings.Contains(b, "mmap") {
		t.Errorf("internal error for a remote client: %d %s", w.Code, b)
	}
}

// TestPreflightAllowsSDKHeaders: a browser app on localhost using the
// OpenAI JS SDK preflights its X-Stainless-* headers; an allowed origin
// gets them granted, and a header list with junk gets only the tokens.
func TestPreflightAllowsSDKHeaders(t *testing.T) {
	ts := newTestServer(t, &fakeService{}, nil)
	tests := []struct {
		asked, want string
	}{
		{"authorization, content-type, x-stainless-lang, x-stainless-retry-count", "authorization, content-type, x-stainless-lang, x-stainless-retry-count"},
		{"", "Authorization, Content-Type"},
		{"x-ok, bad header\r\n", "x-ok"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(http.MethodOptions, ts.URL+"/v1/chat/completions", nil)
		req.Header.Set("Origin", "http://localhost:5173")
		req.Header.Set("Access-Control-Request-Method", "POST")
		if tt.asked != "" {
			req.Header["Access-Control-Request-Headers"] = []string{strings.TrimRight(tt.asked, "\r\n")}
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Headers"); resp.StatusCode != 204 || got != tt.want {
			t.Errorf("asked %q: %d, Access-Control-Allow-Headers %q, want %q", tt.asked, resp.StatusCode, got, tt.want)
		}
	}
}
