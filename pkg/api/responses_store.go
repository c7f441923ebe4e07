package api

import (
	"encoding/json"
	"sync"
	"time"
)

// Default bounds of the Server's response store.
const (
	DefaultResponseStoreCount = 1024
	DefaultResponseStoreBytes = 256 << 20
	DefaultResponseStoreTTL   = time.Hour
)

// storedResponse is one kept response: the object GET returns and the
// conversation a response continuing from it (previous_response_id)
// starts from.
type storedResponse struct {
	resp    json.RawMessage
	history []chatTurn
	size    int64
	expires time.Time
}

// responseStore keeps responses in memory for GET /v1/responses/{id} and
// previous_response_id, bounded by count and bytes (the oldest go first)
// and expiring a while after they were made. It is safe for concurrent use.
type responseStore struct {
	maxCount int
	maxBytes int64
	ttl      time.Duration
	now      func() time.Time

	mu    sync.Mutex
	byID  map[string]*storedResponse
	order []string // ids, oldest first (ids deleted early stay until reached)
	bytes int64
}

func newResponseStore(maxCount int, maxBytes int64, ttl time.Duration, now func() time.Time) *responseStore {
	return &responseStore{maxCount: maxCount, maxBytes: maxBytes, ttl: ttl, now: now, byID: map[string]*storedResponse{}}
}

// put keeps a finished response and its conversation (which includes the
// response's own output). A response larger than the whole store is not
// kept; put reports whether it was.
func (s *responseStore) put(resp *Response, history []chatTurn) bool {
	raw, err := json.Marshal(resp)
	if err != nil {
		return false
	}
	hist, err := json.Marshal(history)
	if err != nil {
		return false
	}
	e := &storedResponse{resp: raw, history: history, size: int64(len(raw) + len(hist)), expires: s.now().Add(s.ttl)}
	if e.size > s.maxBytes {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(resp.ID)
	s.byID[resp.ID] = e
	s.order = append(s.order, resp.ID)
	s.bytes += e.size
	s.evictLocked()
	return true
}

// get returns a kept, unexpired response.
func (s *responseStore) get(id string) (*storedResponse, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evictLocked()
	e, ok := s.byID[id]
	return e, ok
}

// remove drops a response; it reports whether it was kept.
func (s *responseStore) remove(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evictLocked()
	return s.removeLocked(id)
}

func (s *responseStore) removeLocked(id string) bool {
	e, ok := s.byID[id]
	if !ok {
		return false
	}
	delete(s.byID, id)
	s.bytes -= e.size
	return true
}

// evictLocked drops, oldest first, expired responses and those beyond the
// count and byte bounds, and ids already removed.
func (s *responseStore) evictLocked() {
	now := s.now()
	n := 0
	for ; n < len(s.order); n++ {
		e, ok := s.byID[s.order[n]]
		if ok && !now.After(e.expires) && len(s.byID) <= s.maxCount && s.bytes <= s.maxBytes {
			break
		}
		if ok {
			s.removeLocked(s.order[n])
		}
	}
	if n > 0 {
		s.order = append(s.order[:0:0], s.order[n:]...)
	}
}

// len reports how many responses are kept (tests).
func (s *responseStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}
