package hub

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helexa/helexa/pkg/hub/hubtest"
)

func TestParseRef(t *testing.T) {
	aliases := map[string]string{"qwen3:0.6b": "Qwen/Qwen3-0.6B-GGUF:Q8_0", "mine": "me/model@dev"}
	tests := []struct {
		in                      string
		repo, rev, quant, alias string
		local                   bool
		err                     bool
	}{
		{in: "Qwen/Qwen3-0.6B-GGUF", repo: "Qwen/Qwen3-0.6B-GGUF", rev: "main"},
		{in: "Qwen/Qwen3-0.6B-GGUF:q8_0", repo: "Qwen/Qwen3-0.6B-GGUF", rev: "main", quant: "q8_0"},
		{in: "Qwen/Qwen3-0.6B-GGUF@v1.0", repo: "Qwen/Qwen3-0.6B-GGUF", rev: "v1.0"},
		{in: "Qwen/Qwen3-0.6B-GGUF:Q4_K_M@refs/pr/1", repo: "Qwen/Qwen3-0.6B-GGUF", rev: "refs/pr/1", quant: "Q4_K_M"},
		{in: "Qwen/Qwen3-0.6B-GGUF@abc:BF16", repo: "Qwen/Qwen3-0.6B-GGUF", rev: "abc", quant: "BF16"},
		{in: "hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M", repo: "bartowski/Llama-3.2-1B-Instruct-GGUF", rev: "main", quant: "Q4_K_M"},
		{in: "https://huggingface.co/org/m", repo: "org/m", rev: "main"},
		{in: "QWEN3:0.6B", repo: "Qwen/Qwen3-0.6B-GGUF", rev: "main", quant: "Q8_0", alias: "QWEN3:0.6B"},
		{in: "mine", repo: "me/model", rev: "dev", alias: "mine"},
		{in: "./model.gguf", local: true},
		{in: "/abs/dir", local: true},
		{in: "model.gguf", local: true},
		{in: "", err: true},
		{in: "noslash", err: true},
		{in: "org/m:", err: true},
		{in: "org/m@", err: true},
		{in: "org/m:Q4/x", err: true},
		{in: "org/../x", err: true},
		{in: "a/b/c", err: true},
		{in: "org/m@../../etc", err: true},
	}
	for _, tt := range tests {
		r, err := ParseRef(tt.in, aliases)
		if tt.err {
			checkErrorIs(t, err, ErrBadReference, tt.in)
			continue
		}
		mustNoError(t, err, tt.in)
		if tt.local {
			checkTrue(t, r.Local() && filepath.IsAbs(r.Path), tt.in)
			continue
		}
		checkEqual(t, tt.repo, r.Repo, tt.in)
		checkEqual(t, tt.rev, r.Revision, tt.in)
		checkEqual(t, tt.quant, r.Quant, tt.in)
		checkEqual(t, tt.alias, r.Alias, tt.in)
	}
}

func TestUnknownAliasListsKnownOnes(t *testing.T) {
	for _, ref := range []string{"llama9:1b", "gpt-4o-mini"} { // bare names: no such model here
		_, err := ParseRef(ref, BuiltinAliases())
		mustErrorIs(t, err, ErrUnknownModel)
		mustErrorIs(t, err, ErrBadReference)
		checkContains(t, err.Error(), "qwen3:0.6b")
	}
	for _, ref := range []string{"a/b/c", "org/x:Q4 K"} { // repo ids: the alias list would be noise
		_, err := ParseRef(ref, BuiltinAliases())
		mustErrorIs(t, err, ErrBadReference)
		checkFalse(t, errors.Is(err, ErrUnknownModel), err)
		checkFalse(t, strings.Contains(err.Error(), "known aliases"), err)
	}
}

func TestQuantOf(t *testing.T) {
	for in, want := range map[string]string{
		"Qwen3-0.6B-Q8_0.gguf":                   "Q8_0",
		"qwen2.5-0.5b-instruct-q4_k_m.gguf":      "Q4_K_M",
		"Qwen3-30B-A3B-UD-Q4_K_XL.gguf":          "UD-Q4_K_XL",
		"Q4_K_M/m-Q4_K_M-00001-of-00003.gguf":    "Q4_K_M",
		"Llama-3.2-1B-Instruct-IQ4_XS.gguf":      "IQ4_XS",
		"model-bf16.gguf":                        "BF16",
		"tinyllama-1.1b-chat-v1.0.Q5_K_S.gguf":   "Q5_K_S",
		"ggml-model-f16.gguf":                    "F16",
		"model.gguf":                             "",
		"Meta-Llama-3.1-8B-Instruct-Q3_K_L.gguf": "Q3_K_L",
		"gpt-oss-20b-MXFP4.gguf":                 "MXFP4",
		"Llama-3.2-1B-Instruct-Q4_0_4_4.gguf":    "Q4_0_4_4", // ARM repacks, next to a plain Q4_0
		"Llama-3.2-1B-Instruct-Q4_0_8_8.gguf":    "Q4_0_8_8",
		"Llama-3.2-1B-Instruct-Q4_0.gguf":        "Q4_0",
	} {
		checkEqual(t, want, QuantOf(in), in)
	}
}

func TestSelectFiles(t *testing.T) {
	std := []string{"README.md", "m-Q4_K_M.gguf", "m-Q8_0.gguf", "m-F16.gguf", "mmproj-m-F16.gguf"}
	noQ4 := []string{"m-Q8_0.gguf", "m-Q6_K.gguf", "m-BF16.gguf"}
	split := []string{"m-Q8_0-00002-of-00002.gguf", "m-Q8_0-00001-of-00002.gguf", "m-Q4_0.gguf"}
	tests := []struct {
		name   string
		files  []string
		quant  string
		want   []string
		picked string
		auto   bool
		err    error
		errMsg string
	}{
		{name: "default Q4_K_M", files: std, want: []string{"m-Q4_K_M.gguf"}, picked: "Q4_K_M", auto: true},
		{name: "case-insensitive", files: std, quant: "q8_0", want: []string{"m-Q8_0.gguf"}, picked: "Q8_0"},
		{name: "f16 not mmproj", files: std, quant: "F16", want: []string{"m-F16.gguf"}, picked: "F16"},
		{name: "closest when no Q4_K_M", files: noQ4, want: []string{"m-Q6_K.gguf"}, picked: "Q6_K", auto: true},
		{name: "missing quant lists", files: std, quant: "Q2_K", err: ErrQuantNotFound, errMsg: "available quants: F16, Q4_K_M, Q8_0"},
		{name: "ambiguous part", files: []string{"m-Q4_K_M.gguf", "m-Q4_K_S.gguf"}, quant: "Q4_K", err: ErrQuantNotFound, errMsg: "ambiguous"},
		{name: "UD prefix optional", files: []string{"m-UD-Q4_K_XL.gguf", "m-Q8_0.gguf"}, quant: "q4_k_xl", want: []string{"m-UD-Q4_K_XL.gguf"}, picked: "UD-Q4_K_XL"},
		{name: "split ordered", files: split, quant: "Q8_0", want: []string{"m-Q8_0-00001-of-00002.gguf", "m-Q8_0-00002-of-00002.gguf"}, picked: "Q8_0"},
		{name: "split missing shard", files: []string{"m-Q8_0-00001-of-00003.gguf", "m-Q8_0-00003-of-00003.gguf"}, errMsg: "missing shard 2 of 3"},
		{name: "safetensors", files: []string{"config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "model.safetensors.index.json", "tokenizer.json", "tokenizer_config.json", "pytorch_model.bin", "README.md", "generation_config.json", "special_tokens_map.json", "merges.txt"},
			want: []string{"config.json", "generation_config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "model.safetensors.index.json", "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"}},
		{name: "quant on safetensors", files: []string{"config.json", "model.safetensors"}, quant: "Q8_0", errMsg: "safetensors repository"},
		{name: "no weights", files: []string{"README.md", "pytorch_model.bin"}, err: ErrNoWeights},
		{name: "Q4_0 next to ARM repacks", files: []string{"m-Q4_0.gguf", "m-Q4_0_4_4.gguf", "m-Q4_0_4_8.gguf"}, quant: "q4_0", want: []string{"m-Q4_0.gguf"}, picked: "Q4_0"},
	}
	for _, tt := range tests {
		sel, err := selectFiles("org/m", tt.files, tt.quant)
		if tt.err != nil || tt.errMsg != "" {
			mustError(t, err)
			if tt.err != nil {
				checkErrorIs(t, err, tt.err, tt.name)
			}
			checkContains(t, err.Error(), tt.errMsg, tt.name)
			continue
		}
		mustNoError(t, err, tt.name)
		checkEqual(t, tt.want, sel.Files, tt.name)
		checkEqual(t, tt.picked, sel.Quant, tt.name)
		checkEqual(t, tt.auto, sel.AutoQuant, tt.name)
		if tt.auto {
			checkContains(t, sel.Note, tt.picked, tt.name)
		}
	}
}

func TestCacheRootPrecedence(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	tests := []struct {
		explicit, hubCache, hfHome, xdg string
		want                            string
	}{
		{explicit: "/x", hubCache: "/hc", hfHome: "/hh", xdg: "/xdg", want: "/x"},
		{hubCache: "/hc", hfHome: "/hh", xdg: "/xdg", want: "/hc"},
		{hfHome: "/hh", xdg: "/xdg", want: "/hh/hub"},
		{xdg: "/xdg", want: "/xdg/huggingface/hub"},
		{want: filepath.Join(home, ".cache", "huggingface", "hub")},
	}
	for _, tt := range tests {
		t.Setenv("HF_HUB_CACHE", tt.hubCache)
		t.Setenv("HF_HOME", tt.hfHome)
		t.Setenv("XDG_CACHE_HOME", tt.xdg)
		got, err := CacheRoot(tt.explicit)
		mustNoError(t, err)
		checkEqual(t, tt.want, got)
	}
}

func TestOptionsFromEnv(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	mustNoError(t, os.WriteFile(cfg, []byte(`{"hub_cache":"/cfg/cache","aliases":{"Tiny":"org/tiny-GGUF:Q8_0","qwen3:0.6b":"org/other"},"other_key":1}`), 0o644))
	mustNoError(t, os.WriteFile(filepath.Join(dir, "token"), []byte("tok-from-file\n"), 0o600))
	t.Setenv("HELEXA_CONFIG", cfg)
	t.Setenv("HF_HOME", dir)
	t.Setenv("HF_HUB_CACHE", "/env/cache")
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HUB_OFFLINE", "1")
	t.Setenv("HF_ENDPOINT", "https://mirror.example/")
	o, err := OptionsFromEnv()
	mustNoError(t, err)
	checkEqual(t, "/cfg/cache", o.CacheDir)
	checkEqual(t, "tok-from-file", o.Token)
	checkTrue(t, o.Offline)
	checkEqual(t, "https://mirror.example", o.Endpoint)
	checkEqual(t, "org/tiny-GGUF:Q8_0", o.Aliases["tiny"])
	checkEqual(t, "org/other", o.Aliases["qwen3:0.6b"], "user aliases override built-ins")
	checkEqual(t, "bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M", o.Aliases["llama3.2:1b"])

	t.Setenv("HF_TOKEN", "tok-env")
	o, _ = OptionsFromEnv()
	checkEqual(t, "tok-env", o.Token)

	t.Setenv("HELEXA_CONFIG", filepath.Join(dir, "missing.json"))
	_, err = OptionsFromEnv()
	mustError(t, err)
	mustNoError(t, os.WriteFile(cfg, []byte(`{bad`), 0o644))
	t.Setenv("HELEXA_CONFIG", cfg)
	_, err = OptionsFromEnv()
	mustError(t, err)
	checkContains(t, err.Error(), cfg)
}

func TestResolveLocal(t *testing.T) {
	dir := t.TempDir()
	gguf := filepath.Join(dir, "tiny-Q8_0.gguf")
	mustNoError(t, os.WriteFile(gguf, []byte("GGUF"), 0o644))
	c := New(Options{CacheDir: t.TempDir()})
	res, err := c.Resolve(context.Background(), gguf)
	mustNoError(t, err)
	checkTrue(t, res.Local)
	checkEqual(t, gguf, res.ModelPath)
	checkEqual(t, "Q8_0", res.Quant)

	st := filepath.Join(dir, "st")
	mustNoError(t, os.MkdirAll(st, 0o755))
	for _, f := range []string{"config.json", "tokenizer.json", "model.safetensors"} {
		mustNoError(t, os.WriteFile(filepath.Join(st, f), []byte("{}"), 0o644))
	}
	res, err = c.Resolve(context.Background(), st)
	mustNoError(t, err)
	checkEqual(t, FormatSafetensors, res.Format)
	checkEqual(t, st, res.ModelPath)

	_, err = c.Resolve(context.Background(), filepath.Join(dir, "nope.gguf"))
	mustErrorIs(t, err, ErrBadReference)
	_, err = c.Resolve(context.Background(), dir+"/")
	checkNoError(t, err, "a dir with one gguf resolves to it")
}

func TestListAndRemove(t *testing.T) {
	h := hubtest.New(t)
	_, files := ggufRepo(t, h, "org/m-GGUF", "m-Q4_K_M.gguf", "m-Q8_0.gguf")
	h.AddRepo("org/st", map[string][]byte{"config.json": []byte("{}"), "model.safetensors": randBytes(t, 500)})
	tc := newTestClient(t, h)
	ctx := context.Background()
	for _, ref := range []string{"org/m-GGUF:Q4_K_M", "org/m-GGUF:Q8_0", "org/st"} {
		_, err := tc.Resolve(ctx, ref)
		mustNoError(t, err, ref)
	}
	// A second revision sharing the Q8_0 blob.
	files["README.md"] = []byte("v2")
	h.AddRevision("org/m-GGUF", "v2", files)
	_, err := tc.Resolve(ctx, "org/m-GGUF:Q8_0@v2")
	mustNoError(t, err)

	list, err := tc.List(ctx)
	mustNoError(t, err)
	var refs []string
	for _, m := range list {
		refs = append(refs, m.Ref)
	}
	checkEqual(t, []string{"org/m-GGUF:Q4_K_M", "org/m-GGUF:Q8_0", "org/m-GGUF:Q8_0@v2", "org/st"}, refs)
	checkEqual(t, int64(len(files["m-Q4_K_M.gguf"])), list[0].Size)
	checkEqual(t, "main", list[0].Revision)
	checkEqual(t, FormatSafetensors, list[3].Format)
	checkEqual(t, int64(502), list[3].Size)

	repoDir := filepath.Join(tc.cache, "models--org--m-GGUF")
	q8Blob := filepath.Join(repoDir, "blobs", hubtest.SHA256(files["m-Q8_0.gguf"]))
	q4Blob := filepath.Join(repoDir, "blobs", hubtest.SHA256(files["m-Q4_K_M.gguf"]))
	mustNoError(t, tc.Remove(ctx, "org/m-GGUF:q8_0"))
	checkFileExists(t, q8Blob) // still used by v2
	checkFileExists(t, q4Blob)
	mustNoError(t, tc.Remove(ctx, "org/m-GGUF@v2"))
	checkNoFileExists(t, q8Blob)
	checkNoFileExists(t, filepath.Join(repoDir, "refs", "v2"))
	checkFileExists(t, q4Blob)
	err = tc.Remove(ctx, "org/m-GGUF:Q8_0")
	mustErrorIs(t, err, ErrNotCached)
	mustNoError(t, tc.Remove(ctx, "org/m-GGUF"))
	checkNoDirExists(t, repoDir)
	mustNoError(t, tc.Remove(ctx, "org/st"))
	list, err = tc.List(ctx)
	mustNoError(t, err)
	checkEqual(t, 0, len(list))
	checkErrorIs(t, tc.Remove(ctx, "org/never"), ErrNotCached)
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		mustNoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	tests := []struct {
		name     string
		path     string
		required bool
		cache    string
		errMsg   string
	}{
		{name: "no path", path: ""},
		{name: "missing, optional", path: filepath.Join(dir, "none.json")},
		{name: "missing, required", path: filepath.Join(dir, "none.json"), required: true, errMsg: "none.json"},
		{name: "empty file", path: write("empty.json", " \n"), required: true},
		{name: "values", path: write("ok.json", `{"hub_cache":"/c"}`), required: true, cache: "/c"},
		{name: "bad JSON names the file", path: write("bad.json", `{"hub_cache":`), errMsg: "bad.json is not valid JSON"},
	}
	for _, tt := range tests {
		c, err := LoadConfig(tt.path, tt.required)
		if tt.errMsg != "" {
			mustError(t, err)
			checkContains(t, err.Error(), tt.errMsg, tt.name)
			continue
		}
		checkNoError(t, err, tt.name)
		checkEqual(t, tt.cache, c.HubCache, tt.name)
	}
}
