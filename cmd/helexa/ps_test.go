package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/executor"
)

func TestPrintPs(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		models []engine.ModelStatus
		want   []string
		absent []string
	}{
		{"one process", []engine.ModelStatus{{Name: "a", Processor: "CPU", RunnerPID: 42, State: engine.StateReady, Context: 4096}},
			[]string{"pid 42", "ready"}, []string{"ranks"}},
		{"tensor parallel", []engine.ModelStatus{{Name: "b", Processor: "TP×2 CPU", RunnerPID: 7, State: engine.StateReady,
			Ranks: []executor.RankInfo{{Rank: 0, Device: "cpu", PID: 7}, {Rank: 1, Device: "cpu", PID: 8}}}},
			[]string{"TP×2 CPU", "b ranks: rank 0: cpu pid 7, rank 1: cpu pid 8"}, nil},
		{"poisoned", []engine.ModelStatus{{Name: "c", State: engine.StatePoisoned, Error: "rank 1 exited"}},
			[]string{"c is poisoned: rank 1 exited"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := printPs(&b, tt.models, now); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tt.absent {
				if strings.Contains(b.String(), w) {
					t.Errorf("output has %q:\n%s", w, b.String())
				}
			}
		})
	}
}
