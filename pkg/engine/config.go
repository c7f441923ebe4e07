package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/helexa/helexa/internal/envvars"
)

// Config holds the Manager's knobs. The zero value of a field means its
// default (see DefaultConfig).
type Config struct {
	// KeepAlive is how long an idle model stays loaded when a request
	// does not say (0 = unload after each request; <0 = forever).
	KeepAlive time.Duration
	// MaxLoadedModels caps the models loaded at once; idle ones are
	// evicted (least recently used first) to make room.
	MaxLoadedModels int
	// NumParallel caps the sequences one model decodes at once.
	NumParallel int
	// MaxQueue caps the requests waiting for a slot per model; beyond it
	// requests fail with KindBusy. Negative means no queue at all.
	MaxQueue int
	// NumCtx is the default context size for a load.
	NumCtx int
	// ChunkSize is the prefill budget (tokens) of one step.
	ChunkSize int
	// TP is how many tensor-parallel ranks a model is split over when its
	// load does not say (1 = no split).
	TP int
	// FreeMemory, when set, reports memory available for new models
	// (bytes); otherwise a loaded executor's Memory().FreeBytes is used.
	FreeMemory func() int64
}

// Defaults.
const (
	DefaultKeepAlive       = 5 * time.Minute
	DefaultMaxLoadedModels = 3
	DefaultNumParallel     = 8
	DefaultMaxQueue        = 64
	DefaultNumCtx          = 4096
	DefaultChunkSize       = 512
	// MaxTP caps the tensor-parallel ranks one load may ask for (each is
	// a process).
	MaxTP = 16
)

// DefaultConfig is the configuration with every default filled in.
func DefaultConfig() Config {
	return Config{
		KeepAlive:       DefaultKeepAlive,
		MaxLoadedModels: DefaultMaxLoadedModels,
		NumParallel:     DefaultNumParallel,
		MaxQueue:        DefaultMaxQueue,
		NumCtx:          DefaultNumCtx,
		ChunkSize:       DefaultChunkSize,
	}
}

// withDefaults fills zero fields. KeepAlive is taken as given (0 is a
// meaningful value), so callers start from DefaultConfig.
func (c Config) withDefaults() Config {
	if c.MaxLoadedModels <= 0 {
		c.MaxLoadedModels = DefaultMaxLoadedModels
	}
	if c.NumParallel <= 0 {
		c.NumParallel = DefaultNumParallel
	}
	if c.MaxQueue == 0 {
		c.MaxQueue = DefaultMaxQueue
	}
	if c.MaxQueue < 0 {
		c.MaxQueue = 0
	}
	if c.NumCtx <= 0 {
		c.NumCtx = DefaultNumCtx
	}
	if c.ChunkSize <= 0 {
		c.ChunkSize = DefaultChunkSize
	}
	if c.TP <= 0 {
		c.TP = 1
	}
	return c
}

// ConfigFromEnv builds a Config from the HELEXA_* variables (see
// internal/envvars); a malformed value is an error naming the variable.
func ConfigFromEnv() (Config, error) {
	c := DefaultConfig()
	ka, err := ParseKeepAlive(envvars.KeepAlive.Get())
	if err != nil {
		return c, fmt.Errorf("%s: %w", envvars.KeepAlive.Name, err)
	}
	c.KeepAlive = ka
	ints := []struct {
		v   envvars.Var
		dst *int
	}{
		{envvars.MaxLoadedModels, &c.MaxLoadedModels},
		{envvars.NumParallel, &c.NumParallel},
		{envvars.MaxQueue, &c.MaxQueue},
		{envvars.NumCtx, &c.NumCtx},
		{envvars.ChunkSize, &c.ChunkSize},
		{envvars.TP, &c.TP},
	}
	for _, it := range ints {
		n, err := it.v.Int()
		if err != nil {
			return c, err
		}
		*it.dst = n
	}
	if c.MaxQueue == 0 {
		c.MaxQueue = -1 // an explicit 0 means "no queue"
	}
	if c.TP < 0 || c.TP > MaxTP {
		return c, fmt.Errorf("%s=%d: want 1 to %d ranks", envvars.TP.Name, c.TP, MaxTP)
	}
	return c, nil
}

// ParseKeepAlive parses a keep-alive value: a Go duration ("5m", "1h30m",
// "-1s") or a plain number of seconds ("300", "0", "-1"). Negative means
// forever.
func ParseKeepAlive(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultKeepAlive, nil
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("keep-alive %q: want a duration like 5m or a number of seconds (0 unloads at once, negative keeps forever)", s)
	}
	return d, nil
}
