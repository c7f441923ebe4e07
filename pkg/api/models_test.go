package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/engine"
)

// fakeCatalog is a scripted Catalog.
type fakeCatalog struct {
	models []CatalogModel
	err    error
}

func (f fakeCatalog) List(context.Context) ([]CatalogModel, error) { return f.models, f.err }

func catalogFixture() fakeCatalog {
	mod := time.Unix(1600000000, 0)
	return fakeCatalog{models: []CatalogModel{
		{ID: "org/a-GGUF:Q4_K_M", Path: "/hf/a/a-Q4_K_M.gguf", Format: "gguf", Quant: "Q4_K_M", SizeBytes: 400, Modified: mod},
		{ID: "org/a-GGUF:Q8_0", Path: "/hf/a/a-Q8_0.gguf", Format: "gguf", Quant: "Q8_0", SizeBytes: 800, Modified: mod},
		{ID: "org/b", Path: "/hf/b", Format: "safetensors", SizeBytes: 1000, Modified: mod},
	}}
}

// listModelsOf fetches GET /v1/models and decodes its entries.
func listModelsOf(t *testing.T, ts *httptest.Server) []Model {
	t.Helper()
	status, out := get(t, ts, "/v1/models")
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	var ml ModelList
	if err := json.Unmarshal([]byte(out), &ml); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if ml.Object != "list" {
		t.Errorf("object %q, want list", ml.Object)
	}
	return ml.Data
}

func TestModelsListsLoadedAndCached(t *testing.T) {
	f := &fakeService{models: []engine.ModelStatus{
		// Loaded under an alias: the same file as a cached model.
		{Name: "tiny", Path: "/hf/a/a-Q8_0.gguf", State: engine.StateReady, Active: 1, SizeBytes: 900, Processor: "CPU", Context: 4096},
		// Loaded from a local file that is not in the cache.
		{Name: "/models/x.gguf", Path: "/models/x.gguf", State: engine.StatePoisoned, Error: "device lost"},
	}}
	ts := newTestServer(t, f, func(c *Config) { c.Catalog = catalogFixture() })
	got := listModelsOf(t, ts)
	want := []struct {
		id, state string
		loaded    bool
		size      int64
		created   int64
	}{
		{"tiny", engine.StateReady, true, 900, 1700000000},
		{"/models/x.gguf", engine.StatePoisoned, true, 0, 1700000000},
		{"org/a-GGUF:Q4_K_M", StateAvailable, false, 400, 1600000000},
		{"org/b", StateAvailable, false, 1000, 1600000000},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d models, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.id || g.State != w.state || g.Loaded != w.loaded || g.SizeBytes != w.size ||
			g.Created != w.created || g.Object != "model" || g.OwnedBy != "helexa" {
			t.Errorf("model %d: %+v, want %+v", i, g, w)
		}
	}
	if got[0].Quant != "Q8_0" || got[0].Format != "gguf" || got[0].Processor != "CPU" || got[0].Context != 4096 {
		t.Errorf("loaded model should keep its state and learn the cache's quant: %+v", got[0])
	}
	if got[3].Format != "safetensors" || got[3].Processor != "" || got[3].Active != 0 {
		t.Errorf("cached model %+v", got[3])
	}
}

func TestGetModel(t *testing.T) {
	f := &fakeService{models: []engine.ModelStatus{
		{Name: "tiny", Path: "/hf/a/a-Q8_0.gguf", State: engine.StateReady},
	}}
	ts := newTestServer(t, f, func(c *Config) { c.Catalog = catalogFixture() })
	cases := []struct {
		id, wantState string
		wantStatus    int
	}{
		{"tiny", engine.StateReady, 200},
		{"org/a-GGUF:Q8_0", engine.StateReady, 200}, // the cached ref of the loaded model
		{"org/a-GGUF:Q4_K_M", StateAvailable, 200},
		{"org/b", StateAvailable, 200},
		{"org/nope", "", 404},
		{"org/a-GGUF", "", 404}, // exact references only
		{"models/y.gguf", "", 404},
	}
	for _, c := range cases {
		status, out := get(t, ts, "/v1/models/"+c.id)
		if status != c.wantStatus {
			t.Errorf("%s: status %d, want %d: %s", c.id, status, c.wantStatus, out)
			continue
		}
		if status != 200 {
			if !strings.Contains(out, "neither loaded nor in the local cache") || !strings.Contains(out, "not_found") {
				t.Errorf("%s: error %s", c.id, out)
			}
			if isFile := strings.HasSuffix(c.id, ".gguf"); isFile == strings.Contains(out, "helexa pull") {
				t.Errorf("%s: advice %s (pull only for Hub references)", c.id, out)
			}
			continue
		}
		var m Model
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		if m.ID != c.id || m.State != c.wantState {
			t.Errorf("%s: %+v, want state %s", c.id, m, c.wantState)
		}
	}
}

func TestModelsCatalogFailure(t *testing.T) {
	f := &fakeService{models: []engine.ModelStatus{{Name: "m", State: engine.StateReady}}}
	ts := newTestServer(t, f, func(c *Config) {
		c.Catalog = fakeCatalog{err: errors.New("permission denied")}
	})
	// The list still shows what is loaded.
	got := listModelsOf(t, ts)
	if len(got) != 1 || got[0].ID != "m" {
		t.Errorf("models %+v, want the loaded one", got)
	}
	if status, _ := get(t, ts, "/v1/models/m"); status != 200 {
		t.Errorf("loaded model: status %d", status)
	}
	// A model that is not loaded cannot be looked up: the error says why.
	if status, out := get(t, ts, "/v1/models/other"); status != 500 || !strings.Contains(out, "permission denied") {
		t.Errorf("unknown model with a broken catalog: %d %s", status, out)
	}
}

func TestModelsWithoutCatalog(t *testing.T) {
	f := &fakeService{}
	ts := newTestServer(t, f, nil)
	out := listModelsOf(t, ts)
	if out == nil || len(out) != 0 {
		t.Errorf("want an empty list (not null), got %+v", out)
	}
	if _, body := get(t, ts, "/v1/models"); !strings.Contains(body, `"data":[]`) {
		t.Errorf("body %s", body)
	}
}
