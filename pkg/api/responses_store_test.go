package api

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestResponseStoreBounds: the store keeps at most maxCount responses and
// maxBytes bytes, dropping the oldest first, and forgets a response once
// it expires.
func TestResponseStoreBounds(t *testing.T) {
	turn := func(n int) []chatTurn { return []chatTurn{{Role: "user", Content: strings.Repeat("x", n)}} }
	resp := func(i int) *Response { return &Response{ID: fmt.Sprintf("resp_%d", i), Object: "response"} }
	tests := []struct {
		name     string
		count    int
		bytes    float64 // in entries of a 200-byte history
		ttl      time.Duration
		sizes    []int         // history bytes of each response put, in order
		advance  time.Duration // clock moved after the puts
		kept     []int         // responses still kept
		rejected []int         // puts that reported false
	}{
		{"within bounds", 4, 100, time.Hour, []int{10, 10, 10}, 0, []int{0, 1, 2}, nil},
		{"count bound drops the oldest", 2, 100, time.Hour, []int{10, 10, 10}, 0, []int{1, 2}, nil},
		{"byte bound drops the oldest", 10, 2.5, time.Hour, []int{200, 200, 200}, 0, []int{1, 2}, nil},
		{"larger than the store", 10, 2.5, time.Hour, []int{10, 5000}, 0, []int{0}, []int{1}},
		{"expired", 10, 100, time.Minute, []int{10, 10}, time.Minute + time.Second, nil, nil},
		{"not yet expired", 10, 100, time.Minute, []int{10, 10}, time.Minute, []int{0, 1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Unix(1700000000, 0)
			probe := newResponseStore(1, 1<<20, time.Hour, time.Now)
			probe.put(resp(0), turn(200))
			maxBytes := int64(tt.bytes * float64(probe.bytes))
			s := newResponseStore(tt.count, maxBytes, tt.ttl, func() time.Time { return now })
			var rejected []int
			for i, n := range tt.sizes {
				if !s.put(resp(i), turn(n)) {
					rejected = append(rejected, i)
				}
			}
			now = now.Add(tt.advance)
			if fmt.Sprint(rejected) != fmt.Sprint(tt.rejected) {
				t.Errorf("rejected %v, want %v", rejected, tt.rejected)
			}
			var kept []int
			for i := range tt.sizes {
				if e, ok := s.get(fmt.Sprintf("resp_%d", i)); ok {
					kept = append(kept, i)
					if len(e.history) != 1 || len(e.history[0].Content) != tt.sizes[i] {
						t.Errorf("resp_%d: history %d turns", i, len(e.history))
					}
				}
			}
			if fmt.Sprint(kept) != fmt.Sprint(tt.kept) || s.len() != len(tt.kept) {
				t.Errorf("kept %v (len %d), want %v", kept, s.len(), tt.kept)
			}
			if s.bytes < 0 || (len(tt.kept) == 0 && s.bytes != 0) || s.bytes > maxBytes {
				t.Errorf("byte count %d", s.bytes)
			}
		})
	}
}

// TestResponseStoreRemove: a removed response is gone and its bytes freed.
func TestResponseStoreRemove(t *testing.T) {
	s := newResponseStore(10, 1<<20, time.Hour, time.Now)
	s.put(&Response{ID: "a"}, []chatTurn{{Role: "user", Content: "x"}})
	s.put(&Response{ID: "b"}, nil)
	if !s.remove("a") || s.remove("a") || s.remove("zzz") {
		t.Fatal("remove: want true once, then false")
	}
	if _, ok := s.get("a"); ok {
		t.Error("a removed response is still kept")
	}
	if _, ok := s.get("b"); !ok || s.len() != 1 {
		t.Errorf("b lost; %d kept", s.len())
	}
	s.remove("b")
	if s.bytes != 0 || s.len() != 0 {
		t.Errorf("after removing all: %d bytes, %d kept", s.bytes, s.len())
	}
}
