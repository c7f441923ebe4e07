package engine

import (
	"testing"
	"time"
)

func TestParseKeepAlive(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", DefaultKeepAlive, true},
		{"5m", 5 * time.Minute, true},
		{"300", 300 * time.Second, true},
		{"0", 0, true},
		{"-1", -time.Second, true},
		{"-1m", -time.Minute, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseKeepAlive(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("ParseKeepAlive(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("HELEXA_KEEP_ALIVE", "0")
	t.Setenv("HELEXA_NUM_PARALLEL", "2")
	t.Setenv("HELEXA_MAX_QUEUE", "0")
	t.Setenv("HELEXA_CHUNK_SIZE", "64")
	c, err := ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	c = c.withDefaults()
	if c.KeepAlive != 0 || c.NumParallel != 2 || c.MaxQueue != 0 || c.ChunkSize != 64 || c.NumCtx != DefaultNumCtx {
		t.Errorf("config %+v", c)
	}
	t.Setenv("HELEXA_NUM_PARALLEL", "many")
	if _, err := ConfigFromEnv(); err == nil {
		t.Error("bad HELEXA_NUM_PARALLEL accepted")
	}
}
