package main

import (
	"bytes"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/envvars"
)

func TestLogLevel(t *testing.T) {
	tests := []struct {
		env  string
		def  slog.Level
		want slog.Level
	}{
		{"", slog.LevelInfo, slog.LevelInfo},
		{"", slog.LevelWarn, slog.LevelWarn},
		{"debug", slog.LevelWarn, slog.LevelDebug},
		{"WARN", slog.LevelInfo, slog.LevelWarn},
		{" error ", slog.LevelInfo, slog.LevelError},
		{"loud", slog.LevelInfo, slog.LevelInfo},
	}
	for _, tt := range tests {
		t.Setenv(envvars.LogLevel.Name, tt.env)
		if got := logLevel(tt.def); got != tt.want {
			t.Errorf("HELEXA_LOG_LEVEL=%q, default %v: got %v, want %v", tt.env, tt.def, got, tt.want)
		}
	}
}

// TestVersion: `helexa version` and `helexa --version` name the version,
// commit, Go version, CPU kernels and GPU runner.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out bytes.Buffer
		root := newRootCmd(streams{In: strings.NewReader(""), Out: &out, Err: io.Discard})
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		for _, want := range []string{"helexa ", "commit:", "go:", runtime.Version(), "cpu kernels:", "gpu runner:"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v printed %q, missing %q", args, out.String(), want)
			}
		}
	}
}
