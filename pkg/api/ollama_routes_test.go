package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/engine"
)

// textService adds embeddings and tokenizer access to a fakeService.
type textService struct{ *fakeService }

func (textService) Embed(_ context.Context, req engine.EmbedRequest) (engine.EmbedResult, error) {
	out := engine.EmbedResult{PromptTokens: 3 * len(req.Inputs)}
	for range req.Inputs {
		out.Embeddings = append(out.Embeddings, []float32{0.6, 0.8})
	}
	return out, nil
}

func (textService) Tokenize(_ context.Context, req engine.TokenizeRequest) ([]engine.Piece, error) {
	out := []engine.Piece{}
	if req.AddSpecial {
		out = append(out, engine.Piece{ID: 1, Text: ""})
	}
	for i, w := range strings.Fields(req.Text) {
		out = append(out, engine.Piece{ID: int32(10 + i), Text: w})
	}
	return out, nil
}

func (textService) Detokenize(_ context.Context, model string, ids []int32) (string, error) {
	b, _ := json.Marshal(ids)
	return model + ":" + string(b), nil
}

func (textService) ApplyTemplate(_ context.Context, req engine.ChatRequest) (string, error) {
	return "<tpl " + req.Model + ">" + string(req.Messages), nil
}

// removerFunc is a Remover from a function.
type removerFunc func(ctx context.Context, model string) error

func (f removerFunc) Remove(ctx context.Context, model string) error { return f(ctx, model) }

// staticCatalog is a Catalog of fixed models.
type staticCatalog []CatalogModel

func (c staticCatalog) List(context.Context) ([]CatalogModel, error) { return c, nil }

func newTextServer(t *testing.T, f *fakeService, mod func(*Config)) *httptest.Server {
	t.Helper()
	cfg := Config{Service: textService{f}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now: func() time.Time { return time.Unix(1700000000, 0) }}
	if mod != nil {
		mod(&cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func do(t *testing.T, ts *httptest.Server, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestOllamaModelEndpoints(t *testing.T) {
	f := &fakeService{
		models: []engine.ModelStatus{{Name: "org/m-GGUF:Q8_0", Path: "/c/m.gguf", State: engine.StateReady, Context: 4096,
			SizeBytes: 900, Processor: "CPU", ExpiresAt: time.Unix(1700000300, 0).UTC()}},
		details: engine.ModelDetails{Arch: "qwen3", Parameters: 596_049_920, Quant: "Q8_0", Path: "/c/m.gguf", Context: 4096,
			ContextTrain: 40960, Template: "{% if tools %}{{ tools }}{% endif %}<think>"},
	}
	var removed []string
	cat := staticCatalog{
		{ID: "org/m-GGUF:Q8_0", Path: "/c/m.gguf", Format: "gguf", Quant: "Q8_0", SizeBytes: 800, Family: "qwen3", Parameters: 596_049_920},
		{ID: "org/e-GGUF:Q4_K_M", Path: "/c/e.gguf", Format: "gguf", Quant: "Q4_K_M", SizeBytes: 500, Family: "llama", Parameters: 7_500_000_000},
	}
	ts := newTextServer(t, f, func(c *Config) {
		c.Catalog, c.Version = cat, "1.2.3"
		c.Remover = removerFunc(func(_ context.Context, model string) error {
			if model == "gone/x" {
				return engine.Errorf(engine.KindNotFound, "model gone/x is not cached")
			}
			removed = append(removed, model)
			return nil
		})
	})
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		check                    func(string) bool
	}{
		{"tags", "GET", "/api/tags", "", 200, func(out string) bool {
			var tags OllamaTags
			return json.Unmarshal([]byte(out), &tags) == nil && len(tags.Models) == 2 &&
				tags.Models[0].Name == "org/m-GGUF:Q8_0" && tags.Models[0].Model == tags.Models[0].Name && tags.Models[0].Loaded &&
				reflect.DeepEqual(tags.Models[0].Details, OllamaDetails{Format: "gguf", Family: "qwen3", Families: []string{"qwen3"}, ParameterSize: "596.05M", QuantizationLevel: "Q8_0"}) &&
				tags.Models[1].Details.ParameterSize == "7.5B" &&
				tags.Models[1].Details.Family == "llama" && len(tags.Models[1].Digest) == 64
		}},
		{"show", "POST", "/api/show", `{"model":"qwen3:0.6b","verbose":true}`, 200, func(out string) bool {
			var s ShowResponse
			return json.Unmarshal([]byte(out), &s) == nil && s.Details.Family == "qwen3" && s.Details.QuantizationLevel == "Q8_0" &&
				s.ModelInfo["general.architecture"] == "qwen3" && s.ModelInfo["qwen3.context_length"] == 40960.0 &&
				strings.Join(s.Capabilities, ",") == "completion,tools,thinking" && s.Template != "" &&
				s.Parameters == "num_ctx 4096" && s.Name == "qwen3:0.6b" && s.Arch == "qwen3"
		}},
		{"show by old name", "POST", "/api/show", `{"name":"m"}`, 200, func(out string) bool { return strings.Contains(out, `"name":"m"`) }},
		{"ps", "GET", "/api/ps", "", 200, func(out string) bool {
			var ps PSResponse
			if json.Unmarshal([]byte(out), &ps) != nil || len(ps.Models) != 1 {
				return false
			}
			m := ps.Models[0]
			st := m.status()
			return m.Name == "org/m-GGUF:Q8_0" && m.Model == m.Name && m.Size == 900 && m.ContextLength == 4096 &&
				m.Details.Family == "qwen3" && m.SizeVRAM == 0 && st.Name == m.Name && st.State == engine.StateReady &&
				st.ExpiresAt.Equal(time.Unix(1700000300, 0)) && st.Processor == "CPU"
		}},
		{"version", "GET", "/api/version", "", 200, func(out string) bool { return out == `{"version":"1.2.3"}` }},
		{"delete", "DELETE", "/api/delete", `{"model":"org/m-GGUF:Q8_0"}`, 200, func(string) bool {
			return len(removed) == 1 && removed[0] == "org/m-GGUF:Q8_0" && len(f.unloaded) == 1
		}},
		{"delete of a missing model", "DELETE", "/api/delete", `{"model":"gone/x"}`, 404, func(out string) bool {
			return out == `{"error":"model gone/x is not cached","code":"model_not_found"}`
		}},
		{"embed", "POST", "/api/embed", `{"model":"m","input":["a","b"]}`, 200, func(out string) bool {
			var e OllamaEmbedResponse
			return json.Unmarshal([]byte(out), &e) == nil && len(e.Embeddings) == 2 && e.Embeddings[1][1] == 0.8 &&
				e.PromptEvalCount == 6 && e.Model == "m"
		}},
		{"embed one string", "POST", "/api/embed", `{"model":"m","input":"a"}`, 200, func(out string) bool {
			return strings.Contains(out, `"embeddings":[[0.6,0.8]]`)
		}},
		{"embeddings (older)", "POST", "/api/embeddings", `{"model":"m","prompt":"a"}`, 200, func(out string) bool {
			return out == `{"embedding":[0.6,0.8]}`
		}},
		{"embed with dimensions", "POST", "/api/embed", `{"model":"m","input":"a","dimensions":8}`, 400, func(out string) bool {
			return strings.Contains(out, `"error":"dimensions = 8 is not supported`)
		}},
		{"embed without input", "POST", "/api/embed", `{"model":"m"}`, 400, func(out string) bool { return strings.Contains(out, `"error":"field \"input\"`) }},
		{"unknown /api/ route", "GET", "/api/nope", "", 404, func(out string) bool { return strings.HasPrefix(out, `{"error":"no endpoint`) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := do(t, ts, tc.method, tc.path, tc.body)
			if status != tc.status || !tc.check(out) {
				t.Errorf("%s %s: %d %s", tc.method, tc.path, status, out)
			}
		})
	}
}

func TestOllamaPullRecords(t *testing.T) {
	puller := PullFunc(func(_ context.Context, model string, progress func(PullProgress)) error {
		if model == "bad/repo" {
			return engine.Errorf(engine.KindNotFound, "repo bad/repo not found")
		}
		progress(PullProgress{Status: "notice", Message: "picked Q8_0"})
		progress(PullProgress{Status: "start", File: "m.gguf", Total: 10})
		progress(PullProgress{Status: "progress", File: "m.gguf", Completed: 5, Total: 10})
		progress(PullProgress{Status: "verify", File: "m.gguf", Completed: 10, Total: 10})
		progress(PullProgress{Status: "done", File: "m.gguf", Completed: 10, Total: 10})
		return nil
	})
	ts := newTextServer(t, &fakeService{}, func(c *Config) { c.Puller = puller })
	status, out := post(t, ts, "/api/pull", `{"model":"org/m-GGUF:Q8_0","insecure":true}`)
	recs := ndjsonRecords(t, out)
	want := []string{"pulling manifest", "picked Q8_0", "pulling m.gguf", "pulling m.gguf", "verifying sha256 digest", "pulling m.gguf", "success"}
	if status != 200 || len(recs) != len(want) {
		t.Fatalf("%d %s", status, out)
	}
	for i, w := range want {
		if recs[i]["status"] != w {
			t.Errorf("record %d status %v, want %q", i, recs[i]["status"], w)
		}
	}
	if recs[3]["completed"] != 5.0 || recs[3]["total"] != 10.0 || recs[3]["digest"] != "m.gguf" || recs[3]["event"] != "progress" {
		t.Errorf("progress record %v", recs[3])
	}
	if status, out := post(t, ts, "/api/pull", `{"model":"org/m","stream":false}`); status != 200 || out != `{"status":"success"}` {
		t.Errorf("stream false: %d %s", status, out)
	}
	if status, out := post(t, ts, "/api/pull", `{"model":"bad/repo"}`); !strings.Contains(out, `"error":"repo bad/repo not found"`) {
		t.Errorf("failed pull: %d %s", status, out)
	}
}

func TestUtilityEndpoints(t *testing.T) {
	f := &fakeService{models: []engine.ModelStatus{{Name: "only", State: engine.StateReady}},
		details: engine.ModelDetails{Path: "/c/m.gguf", Context: 2048, Template: "TPL"}}
	ts := newTextServer(t, f, func(c *Config) { c.Version = "1.2.3" })
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"tokenize", "POST", "/tokenize", `{"content":"a b","add_special":true}`, 200, `{"tokens":[1,10,11]}`},
		{"tokenize with pieces", "POST", "/tokenize", `{"model":"x","content":"a b","with_pieces":true}`, 200, `{"tokens":[{"id":10,"piece":"a"},{"id":11,"piece":"b"}]}`},
		{"detokenize", "POST", "/detokenize", `{"model":"x","tokens":[5,6]}`, 200, `{"content":"x:[5,6]"}`},
		{"detokenize the only model", "POST", "/detokenize", `{"tokens":[5]}`, 200, `{"content":"only:[5]"}`},
		{"apply-template", "POST", "/apply-template", `{"messages":[{"role":"user","content":"hi"}]}`, 200, `{"prompt":"\u003ctpl only\u003e[{\"role\":\"user\",\"content\":\"hi\"}]"}`},
		{"apply-template without messages", "POST", "/apply-template", `{"model":"x"}`, 400, `"messages\" is required`},
		{"props", "GET", "/props?model=x", "", 200, `"model_path":"/c/m.gguf","chat_template":"TPL","modalities":{"audio":false,"vision":false},"build_info":"helexa 1.2.3","model":"x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := do(t, ts, tc.method, tc.path, tc.body)
			if status != tc.status || !strings.Contains(out, tc.want) {
				t.Errorf("%d %s, want %d with %s", status, out, tc.status, tc.want)
			}
		})
	}
	f.models = append(f.models, engine.ModelStatus{Name: "second"})
	if status, out := do(t, ts, "POST", "/tokenize", `{"content":"a"}`); status != 400 || !strings.Contains(out, "name the model") {
		t.Errorf("two loaded models, no model named: %d %s", status, out)
	}
}

// TestNewRoutesAreGuarded checks that the API key, the browser guard, the
// CORS pre-flight and the body cap cover every new route.
func TestNewRoutesAreGuarded(t *testing.T) {
	routes := []struct{ method, path string }{
		{"POST", "/api/chat"}, {"POST", "/api/generate"}, {"GET", "/api/tags"}, {"POST", "/api/show"}, {"GET", "/api/ps"},
		{"POST", "/api/embed"}, {"POST", "/api/embeddings"}, {"POST", "/api/pull"}, {"DELETE", "/api/delete"},
		{"GET", "/api/version"}, {"POST", "/tokenize"}, {"POST", "/detokenize"}, {"POST", "/apply-template"}, {"GET", "/props"},
	}
	ts := newTextServer(t, &fakeService{}, func(c *Config) { c.APIKey = "k"; c.MaxBodyBytes = 64 })
	send := func(method, path, body string, headers map[string]string) *http.Response {
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, r := range routes {
		t.Run(r.method+r.path, func(t *testing.T) {
			json := map[string]string{"Content-Type": "application/json"}
			if resp := send(r.method, r.path, "{}", json); resp.StatusCode != 401 {
				t.Errorf("without the key: %d", resp.StatusCode)
			}
			evil := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer k", "Origin": "https://evil.example"}
			if resp := send(r.method, r.path, "{}", evil); resp.StatusCode != 403 {
				t.Errorf("foreign origin: %d", resp.StatusCode)
			}
			big := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer k"}
			if resp := send(r.method, r.path, `{"model":"`+strings.Repeat("x", 100)+`"}`, big); resp.StatusCode != 413 {
				t.Errorf("body over the cap: %d", resp.StatusCode)
			}
			pre := map[string]string{"Origin": "http://localhost:3000", "Access-Control-Request-Method": r.method}
			resp := send("OPTIONS", r.path, "", pre)
			if resp.StatusCode != 204 || !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), r.method) {
				t.Errorf("pre-flight: %d, methods %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Methods"))
			}
		})
	}
}

// TestOllamaStreamAbortCancels checks that a client leaving an NDJSON
// stream cancels its generation (freeing its sequence).
func TestOllamaStreamAbortCancels(t *testing.T) {
	for _, path := range []string{"/api/chat", "/api/generate"} {
		t.Run(path, func(t *testing.T) {
			f := &fakeService{deltas: stdDeltas()[:1], block: true, canceled: make(chan struct{})}
			ts := newTestServer(t, f, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			body := `{"model":"m","prompt":"hi","messages":[{"role":"user","content":"hi"}]}`
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := resp.Body.Read(make([]byte, 16)); err != nil {
				t.Fatalf("reading the first record: %v", err)
			}
			cancel()
			resp.Body.Close()
			select {
			case <-f.canceled:
			case <-time.After(10 * time.Second):
				t.Fatal("the engine's context was not cancelled after the client went away")
			}
		})
	}
}

// TestOllamaTagsNames checks that /api/tags lists a cached model under its
// Hub reference and then each alias, once, even when it is loaded by an
// alias as well, and that deleting it unloads it under every name.
func TestOllamaTagsNames(t *testing.T) {
	f := &fakeService{models: []engine.ModelStatus{
		{Name: "m:small", Path: "/c/m.gguf", State: engine.StateReady},
		{Name: "org/m-GGUF:Q8_0", Path: "/c/m.gguf", State: engine.StateReady},
	}}
	cat := staticCatalog{
		{ID: "org/m-GGUF:Q8_0", Path: "/c/m.gguf", Format: "gguf", Quant: "Q8_0", Aliases: []string{"m:small", "m:tiny"}},
		{ID: "org/n-GGUF:Q4_0", Path: "/c/n.gguf", Format: "gguf", Quant: "Q4_0"},
	}
	ts := newTextServer(t, f, func(c *Config) {
		c.Catalog = cat
		c.Remover = removerFunc(func(context.Context, string) error { return nil })
	})
	status, out := get(t, ts, "/api/tags")
	var tags OllamaTags
	if status != 200 || json.Unmarshal([]byte(out), &tags) != nil {
		t.Fatalf("%d %s", status, out)
	}
	var names []string
	for _, m := range tags.Models {
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "org/m-GGUF:Q8_0,m:small,m:tiny,org/n-GGUF:Q4_0" {
		t.Errorf("names %v", names)
	}
	if tags.Models[0].Digest != tags.Models[2].Digest || tags.Models[0].Digest == tags.Models[3].Digest || !tags.Models[1].Loaded {
		t.Errorf("an alias is the same model, another model is not: %+v", tags.Models)
	}
	if status, out := do(t, ts, "DELETE", "/api/delete", `{"name":"m:tiny"}`); status != 200 ||
		strings.Join(f.unloaded, ",") != "m:small,org/m-GGUF:Q8_0" {
		t.Errorf("delete by an alias: %d %s, unloaded %v", status, out, f.unloaded)
	}
}
