package api

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// TestStuckStreamReaderIsDropped: a client that opens a stream and stops
// reading gets a write error once an event cannot reach it within
// StreamWriteTimeout, so its generation is cancelled instead of holding the
// model busy forever.
func TestStuckStreamReaderIsDropped(t *testing.T) {
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		t.Run(path, func(t *testing.T) {
			f := &fakeService{flood: 256 << 10, flooded: make(chan error, 1)}
			ts := newTestServer(t, f, func(c *Config) { c.StreamWriteTimeout = 200 * time.Millisecond })
			body := chatBody + `,"stream":true}`
			if strings.Contains(path, "/v1/completions") {
				body = `{"model":"m","prompt":"p","stream":true}`
			}
			conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// Send the request and never read the answer.
			if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				path, len(body), body); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-f.flooded:
				if !strings.Contains(err.Error(), "writing event") {
					t.Errorf("the generation ended with %v, want a write error", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("a client that stopped reading still holds its generation")
			}
		})
	}
}

func TestStreamWriteTimeoutDefault(t *testing.T) {
	tests := []struct {
		in, want time.Duration
	}{
		{0, DefaultStreamWriteTimeout},
		{time.Second, time.Second},
		{-1, -1},
	}
	for _, tt := range tests {
		s, err := NewServer(Config{Service: &fakeService{}, StreamWriteTimeout: tt.in})
		if err != nil {
			t.Fatal(err)
		}
		if s.cfg.StreamWriteTimeout != tt.want {
			t.Errorf("StreamWriteTimeout %v became %v, want %v", tt.in, s.cfg.StreamWriteTimeout, tt.want)
		}
	}
}

// TestEngineLogsUnderResponseID: the engine's request log lines carry the
// id the client sees in the response, so the two can be matched.
func TestEngineLogsUnderResponseID(t *testing.T) {
	tests := []struct {
		name, path, body string
	}{
		{"chat", "/v1/chat/completions", chatBody + `}`},
		{"chat stream", "/v1/chat/completions", chatBody + `,"stream":true}`},
		{"completion", "/v1/completions", `{"model":"m","prompt":"p"}`},
		{"completion stream", "/v1/completions", `{"model":"m","prompt":"p","stream":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeService{deltas: stdDeltas(), result: stdResult()}
			ts := newTestServer(t, f, nil)
			status, out := post(t, ts, tt.path, tt.body)
			if status != 200 {
				t.Fatalf("status %d: %s", status, out)
			}
			first := out
			if strings.HasPrefix(out, "data: ") {
				first = sseEvents(t, out)[0]
			}
			var v struct{ ID string }
			if err := json.Unmarshal([]byte(first), &v); err != nil || v.ID == "" {
				t.Fatalf("no id in %s: %v", first, err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.reqID != v.ID {
				t.Errorf("engine request id %q, response id %q", f.reqID, v.ID)
			}
		})
	}
}
