package engine

import (
	"sort"
	"sync"
	"time"
)

// MetricsSnapshot is the engine's counters and gauges at one moment, for
// /metrics. Counters only grow for the Manager's lifetime.
type MetricsSnapshot struct {
	// Requests counts finished requests by status: a finish reason
	// ("stop", "tool_calls", "length", "cancelled") or an error kind ("busy",
	// "poisoned", "context_length", …).
	Requests map[string]int64 `json:"requests"`
	// Token counters over all requests.
	PromptTokens    int64 `json:"prompt_tokens"`
	CachedTokens    int64 `json:"cached_tokens"` // prompt tokens served from the prefix cache
	GeneratedTokens int64 `json:"generated_tokens"`
	// PrefixCacheHits counts requests that reused at least one block.
	PrefixCacheHits int64 `json:"prefix_cache_hits"`
	// Throughput over all steps so far: tokens divided by the step time
	// spent on them (a step that mixes prefill and decode is split by
	// token count).
	PrefillTokensPerSec float64 `json:"prefill_tokens_per_sec"`
	DecodeTokensPerSec  float64 `json:"decode_tokens_per_sec"`
	PrefillTokens       int64   `json:"prefill_tokens"` // tokens actually computed in prefill
	DecodeTokens        int64   `json:"decode_tokens"`  // tokens fed in decode steps
	Steps               int64   `json:"steps"`
	// Gauges summed over loaded models.
	QueueDepth     int            `json:"queue_depth"`
	RunningSeqs    int            `json:"running_seqs"`
	KVBlocksUsed   int            `json:"kv_blocks_used"`
	KVBlocksFree   int            `json:"kv_blocks_free"`   // free or holding idle cached prefixes
	KVBlocksCached int            `json:"kv_blocks_cached"` // idle blocks kept for the prefix cache
	Models         []ModelMetrics `json:"models"`
}

// ModelMetrics are one loaded model's gauges.
type ModelMetrics struct {
	Name           string `json:"name"`
	State          string `json:"state"`
	Running        int    `json:"running"`
	Queued         int    `json:"queued"`
	KVBlocksUsed   int    `json:"kv_blocks_used"`
	KVBlocksFree   int    `json:"kv_blocks_free"`
	KVBlocksCached int    `json:"kv_blocks_cached"`
	// The sliding-window store's blocks (models with windowed layers).
	KVWindowBlocksUsed   int `json:"kv_window_blocks_used,omitempty"`
	KVWindowBlocksFree   int `json:"kv_window_blocks_free,omitempty"`
	KVWindowBlocksCached int `json:"kv_window_blocks_cached,omitempty"`
}

// counters accumulates the Manager-wide counters; safe for concurrent use.
type counters struct {
	mu              sync.Mutex
	requests        map[string]int64
	promptTokens    int64
	cachedTokens    int64
	generatedTokens int64
	cacheHits       int64
	prefillTokens   int64
	decodeTokens    int64
	prefillTime     time.Duration
	decodeTime      time.Duration
	steps           int64
}

func newCounters() *counters { return &counters{requests: make(map[string]int64)} }

// request records a finished request.
func (c *counters) request(status string, u Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests[status]++
	c.promptTokens += int64(u.PromptTokens)
	c.cachedTokens += int64(u.CachedTokens)
	c.generatedTokens += int64(u.CompletionTokens)
	if u.CachedTokens > 0 {
		c.cacheHits++
	}
}

// step records one executor step that computed prefill and decode tokens.
func (c *counters) step(prefill, decode int, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.steps++
	c.prefillTokens += int64(prefill)
	c.decodeTokens += int64(decode)
	if total := prefill + decode; total > 0 {
		pd := time.Duration(float64(d) * float64(prefill) / float64(total))
		c.prefillTime += pd
		c.decodeTime += d - pd
	}
}

func (c *counters) fill(s *MetricsSnapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s.Requests = make(map[string]int64, len(c.requests))
	for k, v := range c.requests {
		s.Requests[k] = v
	}
	s.PromptTokens, s.CachedTokens, s.GeneratedTokens = c.promptTokens, c.cachedTokens, c.generatedTokens
	s.PrefixCacheHits = c.cacheHits
	s.PrefillTokens, s.DecodeTokens, s.Steps = c.prefillTokens, c.decodeTokens, c.steps
	if c.prefillTime > 0 {
		s.PrefillTokensPerSec = float64(c.prefillTokens) / c.prefillTime.Seconds()
	}
	if c.decodeTime > 0 {
		s.DecodeTokensPerSec = float64(c.decodeTokens) / c.decodeTime.Seconds()
	}
}

// Metrics returns a snapshot of the engine's counters and gauges.
func (m *Manager) Metrics() MetricsSnapshot {
	var s MetricsSnapshot
	m.counters.fill(&s)
	type loaded struct {
		name, state string
		sched       *scheduler
	}
	m.mu.Lock()
	entries := make([]loaded, 0, len(m.models))
	for _, e := range m.models {
		entries = append(entries, loaded{e.name, e.state, e.sched})
	}
	m.mu.Unlock()
	for _, e := range entries {
		mm := ModelMetrics{Name: e.name, State: e.state}
		if e.sched != nil {
			g := e.sched.gauges()
			mm.Running, mm.Queued = g.running, g.queued
			mm.KVBlocksUsed, mm.KVBlocksFree, mm.KVBlocksCached = g.blocksUsed, g.blocksFree, g.blocksCached
			mm.KVWindowBlocksUsed, mm.KVWindowBlocksFree, mm.KVWindowBlocksCached = g.winUsed, g.winFree, g.winCached
		}
		s.QueueDepth += mm.Queued
		s.RunningSeqs += mm.Running
		s.KVBlocksUsed += mm.KVBlocksUsed
		s.KVBlocksFree += mm.KVBlocksFree
		s.KVBlocksCached += mm.KVBlocksCached
		s.Models = append(s.Models, mm)
	}
	sort.Slice(s.Models, func(i, j int) bool { return s.Models[i].Name < s.Models[j].Name })
	return s
}
