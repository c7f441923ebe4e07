package api

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/helexa/helexa/pkg/engine"
)

// metrics holds the server's counters for /metrics.
type metrics struct {
	mu           sync.Mutex
	requests     map[requestKey]int64
	models       map[string]*modelCounters
	streamErrors int64
}

type requestKey struct {
	route  string
	status int
}

type modelCounters struct {
	requests        int64
	promptTokens    int64
	cachedTokens    int64
	generatedTokens int64
	prefillSeconds  float64
	decodeSeconds   float64
	lastPrefillTPS  float64
	lastDecodeTPS   float64
}

func newMetrics() *metrics {
	return &metrics{requests: map[requestKey]int64{}, models: map[string]*modelCounters{}}
}

func (m *metrics) request(route string, status int) {
	m.mu.Lock()
	m.requests[requestKey{route, status}]++
	m.mu.Unlock()
}

func (m *metrics) streamError() {
	m.mu.Lock()
	m.streamErrors++
	m.mu.Unlock()
}

// usage adds one finished generation.
func (m *metrics) usage(model string, u engine.Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mc := m.models[model]
	if mc == nil {
		mc = &modelCounters{}
		m.models[model] = mc
	}
	mc.requests++
	mc.promptTokens += int64(u.PromptTokens)
	mc.cachedTokens += int64(u.CachedTokens)
	mc.generatedTokens += int64(u.CompletionTokens)
	mc.prefillSeconds += u.PrefillDuration.Seconds()
	mc.decodeSeconds += u.DecodeDuration.Seconds()
	if s := u.PrefillDuration.Seconds(); s > 0 {
		mc.lastPrefillTPS = float64(u.PromptTokens-u.CachedTokens) / s
	}
	if s := u.DecodeDuration.Seconds(); s > 0 {
		mc.lastDecodeTPS = float64(u.CompletionTokens) / s
	}
}

// promWriter writes Prometheus text exposition format.
type promWriter struct {
	w   io.Writer
	err error
}

func (p *promWriter) header(name, typ, help string) {
	p.printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func (p *promWriter) sample(name string, value float64, labels ...string) {
	var b strings.Builder
	b.WriteString(name)
	if len(labels) > 0 {
		b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%s=\"%s\"", labels[i], escapeLabel(labels[i+1]))
		}
		b.WriteByte('}')
	}
	p.printf("%s %s\n", b.String(), strconv.FormatFloat(value, 'g', -1, 64))
}

func (p *promWriter) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// write renders the server's own counters.
func (m *metrics) write(p *promWriter) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p.header("helexa_http_requests_total", "counter", "HTTP requests by route and status code.")
	keys := make([]requestKey, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b requestKey) int {
		if c := strings.Compare(a.route, b.route); c != 0 {
			return c
		}
		return a.status - b.status
	})
	for _, k := range keys {
		p.sample("helexa_http_requests_total", float64(m.requests[k]), "route", k.route, "status", strconv.Itoa(k.status))
	}
	p.header("helexa_stream_errors_total", "counter", "Streams that failed after the first event.")
	p.sample("helexa_stream_errors_total", float64(m.streamErrors))
	names := make([]string, 0, len(m.models))
	for n := range m.models {
		names = append(names, n)
	}
	slices.Sort(names)
	per := []struct {
		name, typ, help string
		get             func(*modelCounters) float64
	}{
		{"helexa_model_generations_total", "counter", "Finished generations per model.", func(c *modelCounters) float64 { return float64(c.requests) }},
		{"helexa_model_prompt_tokens_total", "counter", "Prompt tokens per model (HTTP requests).", func(c *modelCounters) float64 { return float64(c.promptTokens) }},
		{"helexa_model_cached_tokens_total", "counter", "Prompt tokens served from the prefix cache per model.", func(c *modelCounters) float64 { return float64(c.cachedTokens) }},
		{"helexa_model_generated_tokens_total", "counter", "Generated tokens per model (HTTP requests).", func(c *modelCounters) float64 { return float64(c.generatedTokens) }},
		{"helexa_model_prefill_seconds_total", "counter", "Seconds spent in prefill per model.", func(c *modelCounters) float64 { return c.prefillSeconds }},
		{"helexa_model_decode_seconds_total", "counter", "Seconds spent decoding per model.", func(c *modelCounters) float64 { return c.decodeSeconds }},
		{"helexa_model_prefill_tokens_per_second", "gauge", "Prefill speed of the last finished request per model.", func(c *modelCounters) float64 { return c.lastPrefillTPS }},
		{"helexa_model_decode_tokens_per_second", "gauge", "Decode speed of the last finished request per model.", func(c *modelCounters) float64 { return c.lastDecodeTPS }},
	}
	for _, f := range per {
		p.header(f.name, f.typ, f.help)
		for _, n := range names {
			p.sample(f.name, f.get(m.models[n]), "model", n)
		}
	}
}

// writeModels renders the per-model state gauges.
func writeModels(p *promWriter, sts []engine.ModelStatus) {
	p.header("helexa_models_loaded", "gauge", "Models currently loaded.")
	p.sample("helexa_models_loaded", float64(len(sts)))
	p.header("helexa_model_state", "gauge", "1 for the state each loaded model is in.")
	for _, st := range sts {
		for _, state := range []string{engine.StateLoading, engine.StateReady, engine.StatePoisoned} {
			v := 0.0
			if st.State == state {
				v = 1
			}
			p.sample("helexa_model_state", v, "model", st.Name, "state", state)
		}
	}
	p.header("helexa_model_active_requests", "gauge", "Running plus queued requests per model.")
	for _, st := range sts {
		p.sample("helexa_model_active_requests", float64(st.Active), "model", st.Name)
	}
	p.header("helexa_model_size_bytes", "gauge", "Memory used by each model (weights and KV).")
	for _, st := range sts {
		p.sample("helexa_model_size_bytes", float64(st.SizeBytes), "model", st.Name)
	}
}

// writeEngine renders the engine's counters and per-model scheduler gauges.
func writeEngine(p *promWriter, m engine.MetricsSnapshot) {
	p.header("helexa_engine_requests_total", "counter", "Finished engine requests by finish reason or error kind.")
	statuses := make([]string, 0, len(m.Requests))
	for k := range m.Requests {
		statuses = append(statuses, k)
	}
	slices.Sort(statuses)
	for _, k := range statuses {
		p.sample("helexa_engine_requests_total", float64(m.Requests[k]), "status", k)
	}
	totals := []struct {
		name, typ, help string
		v               float64
	}{
		{"helexa_prompt_tokens_total", "counter", "Prompt tokens over all requests.", float64(m.PromptTokens)},
		{"helexa_cached_tokens_total", "counter", "Prompt tokens served from the prefix cache.", float64(m.CachedTokens)},
		{"helexa_prefix_cache_hit_tokens_total", "counter", "Prompt tokens reused from the prefix cache (same as cached tokens).", float64(m.CachedTokens)},
		{"helexa_prefix_cache_hits_total", "counter", "Requests that reused at least one cached KV block.", float64(m.PrefixCacheHits)},
		{"helexa_generated_tokens_total", "counter", "Generated tokens over all requests.", float64(m.GeneratedTokens)},
		{"helexa_prefill_tokens_total", "counter", "Prompt tokens actually computed in prefill.", float64(m.PrefillTokens)},
		{"helexa_decode_tokens_total", "counter", "Tokens fed in decode steps.", float64(m.DecodeTokens)},
		{"helexa_steps_total", "counter", "Executor steps run.", float64(m.Steps)},
		{"helexa_prefill_tokens_per_second", "gauge", "Prefill throughput over all steps so far.", m.PrefillTokensPerSec},
		{"helexa_decode_tokens_per_second", "gauge", "Decode throughput over all steps so far.", m.DecodeTokensPerSec},
	}
	for _, t := range totals {
		p.header(t.name, t.typ, t.help)
		p.sample(t.name, t.v)
	}
	gauges := []struct {
		name, help string
		get        func(engine.ModelMetrics) float64
	}{
		{"helexa_queue_depth", "Requests waiting for a slot per model.", func(s engine.ModelMetrics) float64 { return float64(s.Queued) }},
		{"helexa_running_sequences", "Sequences in the running batch per model.", func(s engine.ModelMetrics) float64 { return float64(s.Running) }},
		{"helexa_kv_blocks_used", "KV cache blocks in use per model.", func(s engine.ModelMetrics) float64 { return float64(s.KVBlocksUsed) }},
		{"helexa_kv_blocks_free", "KV cache blocks free (or holding idle cached prefixes) per model.", func(s engine.ModelMetrics) float64 { return float64(s.KVBlocksFree) }},
		{"helexa_kv_blocks_cached", "Idle KV blocks kept for the prefix cache per model.", func(s engine.ModelMetrics) float64 { return float64(s.KVBlocksCached) }},
		{"helexa_kv_window_blocks_used", "Sliding-window KV store blocks in use per model (windowed models).", func(s engine.ModelMetrics) float64 { return float64(s.KVWindowBlocksUsed) }},
		{"helexa_kv_window_blocks_cached", "Idle sliding-window KV blocks kept for the prefix cache per model.", func(s engine.ModelMetrics) float64 { return float64(s.KVWindowBlocksCached) }},
	}
	for _, g := range gauges {
		p.header(g.name, "gauge", g.help)
		for _, mm := range m.Models {
			p.sample(g.name, g.get(mm), "model", mm.Name)
		}
	}
}

// metricsHandler serves GET /metrics in the Prometheus text format.
func (s *Server) metricsHandler(c *gin.Context) {
	sts, err := s.cfg.Service.PS(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	var b strings.Builder
	p := &promWriter{w: &b}
	s.metrics.write(p)
	writeModels(p, sts)
	if s.cfg.Engine != nil {
		writeEngine(p, s.cfg.Engine.Metrics())
	}
	c.Data(http.StatusOK, "text/plain; version=0.0.4; charset=utf-8", []byte(b.String()))
}
