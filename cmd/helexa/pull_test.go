package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"
	"github.com/schollz/progressbar/v3"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/internal/humanize"
	"github.com/helexa/helexa/pkg/hub"
	"github.com/helexa/helexa/pkg/hub/hubtest"
	"github.com/helexa/helexa/pkg/models/gguf"
)

// hubEnv points helexa at a fake hub with an empty cache and a config file
// holding one alias.
func hubEnv(t *testing.T) *hubtest.Hub {
	t.Helper()
	h := hubtest.New(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"aliases":{"tiny":"org/m-GGUF:Q8_0"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HELEXA_CONFIG", cfg)
	t.Setenv("HF_ENDPOINT", h.URL)
	t.Setenv("HF_HUB_CACHE", filepath.Join(dir, "hub"))
	t.Setenv("HF_HOME", dir)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	h.AddRepo("org/m-GGUF", map[string][]byte{
		"m-Q4_K_M.gguf": bytes.Repeat([]byte("a"), 4000),
		"m-Q8_0.gguf":   bytes.Repeat([]byte("b"), 6000),
		"README.md":     []byte("card"),
	})
	return h
}

func execHubCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd(streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func TestPullPlainOutput(t *testing.T) {
	hubEnv(t)
	out, errOut, err := execHubCLI(t, "pull", "org/m-GGUF")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"picked Q4_K_M", "downloading m-Q4_K_M.gguf (3.9 KiB)", "downloaded  m-Q4_K_M.gguf"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
	if !strings.Contains(out, "org/m-GGUF:Q4_K_M") || !strings.Contains(out, "m-Q4_K_M.gguf") {
		t.Errorf("stdout %q lacks the reference and path", out)
	}
	_, errOut, err = execHubCLI(t, "pull", "org/m-GGUF:q4_k_m")
	if err != nil || !strings.Contains(errOut, "cached      m-Q4_K_M.gguf") {
		t.Errorf("second pull: err %v, stderr %q", err, errOut)
	}
}

func TestPullJSONEvents(t *testing.T) {
	hubEnv(t)
	out, errOut, err := execHubCLI(t, "pull", "--json", "tiny")
	if err != nil {
		t.Fatal(err)
	}
	if errOut != "" {
		t.Errorf("stderr should be empty with --json, got %q", errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var kinds []string
	for _, l := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %q is not JSON: %v", l, err)
		}
		kinds = append(kinds, ev["event"].(string))
	}
	if kinds[0] != "start" || kinds[len(kinds)-1] != "pulled" || !hasString(kinds, "done") {
		t.Errorf("events %v", kinds)
	}
	var res struct {
		Ref, Quant, ModelPath string
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || res.Ref != "org/m-GGUF:Q8_0" || res.Quant != "Q8_0" {
		t.Errorf("result %+v (%v)", res, err)
	}
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestPullErrors(t *testing.T) {
	hubEnv(t)
	tests := []struct{ ref, want string }{
		{"org/m-GGUF:Q2_K", "available quants: Q4_K_M, Q8_0"},
		{"org/missing", "HTTP 404"},
		{"nosuchalias", "known aliases"},
	}
	for _, tt := range tests {
		_, _, err := execHubCLI(t, "pull", tt.ref)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("pull %s: error %v, want %q", tt.ref, err, tt.want)
		}
	}
	t.Setenv("HF_HUB_OFFLINE", "1")
	_, _, err := execHubCLI(t, "pull", "org/m-GGUF")
	if err == nil || !strings.Contains(err.Error(), "HF_HUB_OFFLINE=1 keeps helexa off the network") {
		t.Errorf("offline pull of an uncached model: %v", err)
	}
}

func TestListAndRm(t *testing.T) {
	hubEnv(t)
	out, _, err := execHubCLI(t, "list")
	if err != nil || !strings.Contains(out, "no models") {
		t.Fatalf("empty list: %q %v", out, err)
	}
	if _, _, err := execHubCLI(t, "pull", "org/m-GGUF:Q4_K_M", "tiny"); err != nil {
		t.Fatal(err)
	}
	out, _, err = execHubCLI(t, "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"MODEL", "org/m-GGUF:Q4_K_M", "org/m-GGUF:Q8_0", "gguf Q8_0", "5.9 KiB", "main ("} {
		if !strings.Contains(out, want) {
			t.Errorf("list output %q lacks %q", out, want)
		}
	}
	out, _, err = execHubCLI(t, "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var models []struct {
		Ref  string
		Size int64
	}
	if err := json.Unmarshal([]byte(out), &models); err != nil || len(models) != 2 || models[1].Size != 6000 {
		t.Fatalf("list --json: %v %+v", err, models)
	}
	if out, _, err = execHubCLI(t, "rm", "tiny"); err != nil || !strings.Contains(out, "removed tiny") {
		t.Fatalf("rm: %q %v", out, err)
	}
	out, _, _ = execHubCLI(t, "list")
	if strings.Contains(out, "Q8_0") || !strings.Contains(out, "Q4_K_M") {
		t.Errorf("after rm: %q", out)
	}
	if _, _, err := execHubCLI(t, "rm", "tiny"); err == nil || !strings.Contains(err.Error(), "not in the local cache") {
		t.Errorf("rm twice: %v", err)
	}
}

func TestLineProgressAndBytes(t *testing.T) {
	for n, want := range map[int64]string{-1: "size unknown", 10: "10 B", 2048: "2.0 KiB", 5 << 30: "5.0 GiB"} {
		if got := humanize.Bytes(n); got != want {
			t.Errorf("humanize.Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestBarRendererDrawsOneBarPerFile(t *testing.T) {
	var buf bytes.Buffer
	b := &barRenderer{w: &buf, bars: map[string]*progressbar.ProgressBar{}}
	b.handle(hub.Event{Kind: hub.EventNotice, Message: "picked Q4_K_M"})
	b.handle(hub.Event{Kind: hub.EventStart, File: "a.gguf", Total: 1 << 20})
	b.handle(hub.Event{Kind: hub.EventProgress, File: "a.gguf", Bytes: 1 << 19, Total: 1 << 20})
	b.handle(hub.Event{Kind: hub.EventStart, File: "b.gguf", Total: 100})
	b.handle(hub.Event{Kind: hub.EventVerify, File: "a.gguf", Bytes: 1 << 20, Total: 1 << 20})
	b.handle(hub.Event{Kind: hub.EventDone, File: "a.gguf", Bytes: 1 << 20, Total: 1 << 20})
	b.handle(hub.Event{Kind: hub.EventCached, File: "c.json"})
	if len(b.bars) != 1 {
		t.Errorf("open bars: %d, want 1 (b.gguf)", len(b.bars))
	}
	b.finish()
	out := buf.String()
	for _, want := range []string{"picked Q4_K_M", "a.gguf", "1.0 MB", "c.json (cached)"} {
		if !strings.Contains(out, want) {
			t.Errorf("bar output %q lacks %q", out, want)
		}
	}
}

// splitGGUF rewrites a GGUF file as n shards the way llama.cpp's gguf-split
// does (metadata in the first, split.* keys in all, tensors spread in order)
// and returns their contents by shard name (prefix-0000K-of-0000N.gguf).
func splitGGUF(t *testing.T, src, prefix string, n int) map[string][]byte {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tensors := f.Tensors()
	out := map[string][]byte{}
	for i := range n {
		w := gguf.NewWriter()
		if i == 0 {
			for _, k := range f.Keys() {
				v, _ := f.Value(k)
				if err := w.SetValue(k, v); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.SetValue("split.no", gguf.Value{Type: gguf.TypeUint16, V: uint16(i)}); err != nil {
			t.Fatal(err)
		}
		if err := w.SetValue("split.count", gguf.Value{Type: gguf.TypeUint16, V: uint16(n)}); err != nil {
			t.Fatal(err)
		}
		w.SetInt32("split.tensors.count", int32(len(tensors)))
		per := (len(tensors) + n - 1) / n
		for _, ti := range tensors[min(i*per, len(tensors)):min((i+1)*per, len(tensors))] {
			if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, f.TensorData(ti)); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("%s-%05d-of-%05d.gguf", prefix, i+1, n)] = buf.Bytes()
	}
	return out
}

// TestRunPullsSplitGGUFAsOneModel: `helexa run org/repo` on a repo whose
// quant is a split GGUF pulls every shard into the cache and loads them as
// one model, answering exactly as the unsplit file does.
func TestRunPullsSplitGGUFAsOneModel(t *testing.T) {
	h := hubEnv(t)
	t.Setenv("HELEXA_HOST", "127.0.0.1:1") // no daemon: load in-process
	t.Setenv("HELEXA_STATE_DIR", t.TempDir())
	t.Setenv("HELEXA_LOG_LEVEL", "")
	model := fixtures.Path(t, "models", "stories260K.gguf")
	files := splitGGUF(t, model, "F32/stories-F32", 3)
	files["stories-Q8_0.gguf"] = []byte("another quant, never fetched")
	commit := h.AddRepo("org/stories-GGUF", files)

	o := greedyRunOptions()
	o.Raw, o.NumPredict = true, 4
	var out, errb bytes.Buffer
	err := runRun(context.Background(), withArgs(o, "org/stories-GGUF:f32", "Once upon a time"), streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	if err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, errb.String())
	}
	if want := ", there was a"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("stdout %q does not start with %q (the unsplit model's answer)", out.String(), want)
	}
	snap := filepath.Join(os.Getenv("HF_HUB_CACHE"), "models--org--stories-GGUF", "snapshots", commit)
	for name, data := range files {
		got, err := os.ReadFile(filepath.Join(snap, name))
		if strings.HasSuffix(name, "Q8_0.gguf") {
			if err == nil {
				t.Errorf("%s was fetched but not asked for", name)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("shard %s not in the cache intact: %v", name, err)
		}
	}
}

// TestProgressModes: bars only on a terminal and only while
// HF_HUB_DISABLE_PROGRESS_BARS is not true; otherwise a line per file.
func TestProgressModes(t *testing.T) {
	tests := []struct {
		tty     bool
		disable string
		bars    bool
	}{
		{tty: true, bars: true},
		{tty: true, disable: "0", bars: true},
		{tty: true, disable: "1"},
		{tty: true, disable: "TRUE"},
		{tty: false},
		{tty: false, disable: "0"},
	}
	for _, tt := range tests {
		t.Setenv("HF_HUB_DISABLE_PROGRESS_BARS", tt.disable)
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		var w io.Writer = tty
		var buf bytes.Buffer
		if !tt.tty {
			w = &buf
		}
		progress, done := newProgress(w)
		progress(hub.Event{Kind: hub.EventStart, File: "a.gguf", Total: 1 << 20})
		progress(hub.Event{Kind: hub.EventProgress, File: "a.gguf", Bytes: 1 << 19, Total: 1 << 20})
		progress(hub.Event{Kind: hub.EventDone, File: "a.gguf", Bytes: 1 << 20, Total: 1 << 20})
		done()
		tty.Close()
		if tt.tty {
			b, _ := io.ReadAll(ptmx) // ends with EIO once the other side is closed
			buf.Write(b)
		}
		ptmx.Close()
		out := buf.String()
		gotBars := strings.Contains(out, "100%")
		gotLines := strings.Contains(out, "downloading a.gguf (1.0 MiB)") && strings.Contains(out, "downloaded  a.gguf")
		if gotBars != tt.bars || gotLines == tt.bars {
			t.Errorf("tty %v, HF_HUB_DISABLE_PROGRESS_BARS=%q: bars %v, lines %v, want bars %v; output %q", tt.tty, tt.disable, gotBars, gotLines, tt.bars, out)
		}
	}
}

func TestPullLocalFile(t *testing.T) {
	hubEnv(t)
	model := fixtures.Path(t, "models", "stories260K.gguf")
	out, _, err := execHubCLI(t, "pull", model)
	if err != nil {
		t.Fatal(err)
	}
	if want := model + " is a local gguf model; nothing to download\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
}
