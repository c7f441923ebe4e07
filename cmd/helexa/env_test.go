package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/pkg/engine"
)

// TestEnvDefaultsMatchEngine: the defaults `helexa --help` shows are the
// ones the engine uses when the variables are unset.
func TestEnvDefaultsMatchEngine(t *testing.T) {
	for _, v := range envvars.All() {
		t.Setenv(v.Name, "")
	}
	ka, err := engine.ParseKeepAlive(envvars.KeepAlive.Default)
	if err != nil || ka != engine.DefaultKeepAlive {
		t.Errorf("%s default %q = %v, %v; the engine uses %v", envvars.KeepAlive.Name, envvars.KeepAlive.Default, ka, err, engine.DefaultKeepAlive)
	}
	ints := []struct {
		v    envvars.Var
		want int
	}{
		{envvars.MaxLoadedModels, engine.DefaultMaxLoadedModels},
		{envvars.NumParallel, engine.DefaultNumParallel},
		{envvars.MaxQueue, engine.DefaultMaxQueue},
		{envvars.NumCtx, engine.DefaultNumCtx},
		{envvars.ChunkSize, engine.DefaultChunkSize},
	}
	for _, it := range ints {
		if n, err := it.v.Int(); err != nil || n != it.want {
			t.Errorf("%s default %q = %d, %v; the engine uses %d", it.v.Name, it.v.Default, n, err, it.want)
		}
	}
	cfg, err := engine.ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	def := engine.DefaultConfig()
	cfg.FreeMemory, def.FreeMemory = nil, nil
	if cfg.KeepAlive != def.KeepAlive || cfg.MaxLoadedModels != def.MaxLoadedModels || cfg.NumParallel != def.NumParallel ||
		cfg.MaxQueue != def.MaxQueue || cfg.NumCtx != def.NumCtx || cfg.ChunkSize != def.ChunkSize {
		t.Errorf("ConfigFromEnv with nothing set = %+v, DefaultConfig = %+v", cfg, def)
	}
	if envvars.Host.Default != "127.0.0.1:13131" {
		t.Errorf("%s default %q: the README and the flags' help say 127.0.0.1:13131", envvars.Host.Name, envvars.Host.Default)
	}
}

// TestDebugEngineEnv: a malformed HELEXA_CHUNK_SIZE / HELEXA_NUM_THREADS
// fails the debug commands with an error naming it, unless the flag that
// overrides it is given.
func TestDebugEngineEnv(t *testing.T) {
	tests := []struct {
		name, env, value string
		args             []string
		want             string
	}{
		{"bad chunk size", envvars.ChunkSize.Name, "big", []string{"debug", "logits", "x.gguf", "--tokens", "1"}, `HELEXA_CHUNK_SIZE="big"`},
		{"bad threads", envvars.NumThreads.Name, "-2", []string{"debug", "generate", "x.gguf", "--tokens", "1"}, `HELEXA_NUM_THREADS="-2"`},
		{"flag overrides", envvars.ChunkSize.Name, "big", []string{"debug", "logits", "x.gguf", "--tokens", "1", "--chunk", "8"}, "x.gguf"},
		{"negative threads flag", envvars.NumThreads.Name, "", []string{"debug", "logits", "x.gguf", "--tokens", "1", "--threads", "-1"}, "--threads -1: must be zero (all cores) or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(tt.env, tt.value)
			var out bytes.Buffer
			root := newRootCmd(streams{Out: &out, Err: &out})
			root.SetArgs(tt.args)
			err := root.ExecuteContext(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// TestKVTypeEnv: HELEXA_KV_TYPE reaches the engine (an unknown type is an
// error naming the variable) and its default is F16.
func TestKVTypeEnv(t *testing.T) {
	t.Setenv(envvars.KVType.Name, "q4")
	if _, err := newEngine(nil, nil, nil); err == nil || !strings.Contains(err.Error(), envvars.KVType.Name) {
		t.Errorf("HELEXA_KV_TYPE=q4: %v, want an error naming the variable", err)
	}
	t.Setenv(envvars.KVType.Name, "f16")
	m, err := newEngine(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = m.Close(context.Background())
	if envvars.KVType.Default != "f16" {
		t.Errorf("%s default %q, want f16 (llama.cpp's and ollama's default)", envvars.KVType.Name, envvars.KVType.Default)
	}
}
