package api

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/engine"
)

// TestOriginMatching: loopback origins, IPv6 literals included, are
// accepted; patterns are literal except "*", so "[::1]" is no character
// class admitting "http://1" or "http://:".
func TestOriginMatching(t *testing.T) {
	g := &Guard{Origins: []string{"https://*.example.com", "chrome-extension://*", "http://[fd00::1]:8080"}}
	tests := []struct {
		origin string
		want   bool
	}{
		{"http://[::1]:5173", true},
		{"http://[::1]", true},
		{"https://[::1]:443", true},
		{"http://localhost:3000", true},
		{"http://127.0.0.1:8080", true},
		{"https://app.example.com", true},
		{"https://a.b.example.com", true},
		{"chrome-extension://abcdefghij", true},
		{"http://[fd00::1]:8080", true},
		{"http://1", false},
		{"http://:", false},
		{"http://[::2]:5173", false},
		{"http://localhost.evil.com", false},
		{"http://localhost:3000@evil.com", false},
		{"http://localhost:3000/path", false},
		{"https://example.com", false},
		{"https://evil.com/.example.com", false},
		{"https://evilexample.com", false},
		{"http://[fd00::1]:8081", false},
		{"null", false},
	}
	for _, tc := range tests {
		if got := g.originAllowed(tc.origin); got != tc.want {
			t.Errorf("originAllowed(%q) = %v, want %v", tc.origin, got, tc.want)
		}
	}
}

// TestBodyReadTimeout: a client that sends headers and then stalls its
// body gets 408 once BodyReadTimeout passes, instead of holding the
// connection; a streamed answer that outlasts the timeout is not cut.
func TestBodyReadTimeout(t *testing.T) {
	f := &fakeService{deltas: []engine.Delta{{Content: "hi"}}, block: true, canceled: make(chan struct{})}
	ts := newTestServer(t, f, func(c *Config) { c.BodyReadTimeout = 200 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = conn.Write([]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"model\":"))
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("stalled body: status %d, want 408", resp.StatusCode)
	}

	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err = ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.canceled:
		t.Fatal("a stream was cancelled by the body read deadline")
	case <-time.After(4 * 200 * time.Millisecond):
	}
	resp.Body.Close()
	select {
	case <-f.canceled:
	case <-time.After(10 * time.Second):
		t.Fatal("closing the stream did not cancel the generation")
	}
}
