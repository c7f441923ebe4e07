package main

import (
	"log/slog"
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
