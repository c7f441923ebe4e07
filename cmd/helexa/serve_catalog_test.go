package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/helexa/helexa/pkg/api"
	"github.com/helexa/helexa/pkg/engine"
)

// loadedOnly is an engine.Service whose only loaded model is a local file;
// the /v1/models handler calls nothing but PS.
type loadedOnly struct{ engine.Service }

func (loadedOnly) PS(context.Context) ([]engine.ModelStatus, error) {
	return []engine.ModelStatus{{Name: "/tmp/x.gguf", Path: "/tmp/x.gguf", State: engine.StateReady}}, nil
}

// TestServeCatalogListsCache pulls into a fake Hub's cache and checks that
// serve's catalog, wired into the API server, lists the cached quant.
func TestServeCatalogListsCache(t *testing.T) {
	hubEnv(t)
	if _, _, err := execHubCLI(t, "pull", "org/m-GGUF:Q8_0"); err != nil {
		t.Fatal(err)
	}
	catalog, err := newServeCatalog()
	if err != nil {
		t.Fatal(err)
	}
	got, err := catalog.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "org/m-GGUF:Q8_0" || got[0].Quant != "Q8_0" || got[0].Format != "gguf" ||
		got[0].SizeBytes != 6000 || got[0].Path == "" || got[0].Modified.IsZero() {
		t.Fatalf("catalog %+v, want the pulled Q8_0", got)
	}

	srv, err := api.NewServer(api.Config{Service: loadedOnly{}, Catalog: catalog, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var ml api.ModelList
	if err := json.Unmarshal(body, &ml); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if len(ml.Data) != 2 || ml.Data[0].ID != "/tmp/x.gguf" || !ml.Data[0].Loaded ||
		ml.Data[1].ID != "org/m-GGUF:Q8_0" || ml.Data[1].State != api.StateAvailable || ml.Data[1].Loaded {
		t.Errorf("/v1/models = %s", body)
	}
}
