package device

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
		bad  bool
	}{
		{"", Spec{Auto: true}, false},
		{"AUTO", Spec{Auto: true}, false},
		{"cpu", Spec{Kind: CPU}, false},
		{"cuda", Spec{Kind: CUDA}, false},
		{"gpu", Spec{Kind: CUDA}, false},
		{" cuda:3 ", Spec{Kind: CUDA, Index: 3}, false},
		{"cuda:-1", Spec{}, true},
		{"cuda:x", Spec{}, true},
		{"metal", Spec{}, true},
	} {
		got, err := Parse(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v", tc.in, got, err)
		}
	}
	if s := (Spec{Kind: CUDA, Index: 2}).String(); s != "cuda:2" {
		t.Errorf("String %q", s)
	}
}

// fakeHost makes a driver folder with n GPUs and an executable runner
// beside a fake helexa binary.
func fakeHost(t *testing.T, gpus int) Env {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "gpus")
	for i := 0; i < gpus; i++ {
		if err := os.MkdirAll(filepath.Join(root, "0000:0"+string(rune('0'+i))+":00.0"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, RunnerName), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Env{Exe: filepath.Join(dir, "helexa"), DriverRoot: root}
}

func TestResolve(t *testing.T) {
	h100 := GPU{Index: 0, Name: "NVIDIA H100", Major: 9, TotalBytes: 80 << 30}
	probeOK := func(context.Context, string) ([]GPU, error) { return []GPU{h100, {Index: 1, Name: "B"}}, nil }
	probeFail := func(context.Context, string) ([]GPU, error) {
		return nil, errors.New("exit status 1: no CUDA-capable device")
	}
	for _, tc := range []struct {
		name   string
		spec   string
		gpus   int
		probe  func(context.Context, string) ([]GPU, error)
		kind   Kind
		gpu    string
		errHas string // an error naming this
		whyHas string // auto's reason for the CPU
	}{
		{"cpu asked", "cpu", 1, probeOK, CPU, "", "", ""},
		{"auto with a GPU", "auto", 1, probeOK, CUDA, "NVIDIA H100", "", ""},
		{"auto without a driver", "auto", 0, probeOK, CPU, "", "", "no NVIDIA GPU driver"},
		{"auto, probe fails", "auto", 1, probeFail, CPU, "", "", "no CUDA-capable device"},
		{"cuda:1", "cuda:1", 2, probeOK, CUDA, "B", "", ""},
		{"cuda:5 missing", "cuda:5", 2, probeOK, "", "", "no CUDA device 5", ""},
		{"cuda without a driver", "cuda", 0, probeOK, "", "", "no NVIDIA GPU driver", ""},
		{"a named runner's probe decides", "cuda", -1, probeOK, CUDA, "NVIDIA H100", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := fakeHost(t, max(tc.gpus, 0))
			env.Probe = tc.probe
			if tc.gpus < 0 { // HELEXA_CUDA_RUNNER names the runner
				env.Runner = filepath.Join(filepath.Dir(env.Exe), RunnerName)
			}
			s, err := Parse(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Resolve(context.Background(), s, env)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("error %v, want one naming %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Kind != tc.kind || c.GPU.Name != tc.gpu || !strings.Contains(c.Why, tc.whyHas) {
				t.Errorf("choice %+v", c)
			}
			if c.Kind == CUDA && c.Runner != filepath.Join(filepath.Dir(env.Exe), RunnerName) {
				t.Errorf("runner %q", c.Runner)
			}
		})
	}
}

func TestFindRunner(t *testing.T) {
	env := fakeHost(t, 0)
	if _, err := FindRunner(filepath.Join(t.TempDir(), "nope"), ""); err == nil {
		t.Error("a missing explicit runner was accepted")
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := FindRunner("", filepath.Join(t.TempDir(), "helexa")); err == nil || !strings.Contains(err.Error(), "make cuda") {
		t.Errorf("no runner anywhere: %v", err)
	}
	if p, err := FindRunner("", env.Exe); err != nil || filepath.Base(p) != RunnerName {
		t.Errorf("runner beside helexa: %q, %v", p, err)
	}
}

// TestProbe runs a script that plays helexa-cuda --probe, and one that
// fails as the real one does on a machine without a GPU.
func TestProbe(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok")
	script := "#!/bin/sh\n[ \"$1\" = --probe ] || exit 9\necho '[{\"index\":0,\"name\":\"NVIDIA H200\",\"major\":9,\"minor\":0,\"total_bytes\":150000000000,\"free_bytes\":149000000000}]'\n"
	if err := os.WriteFile(ok, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	gpus, err := Probe(context.Background(), ok)
	if err != nil || len(gpus) != 1 || gpus[0].Name != "NVIDIA H200" || gpus[0].FreeBytes != 149000000000 {
		t.Fatalf("probe %+v, %v", gpus, err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("#!/bin/sh\necho 'Error in initialization' ; exit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Probe(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "Error in initialization") {
		t.Errorf("failing probe: %v", err)
	}
	if _, err := parseProbe([]byte("not json")); err == nil {
		t.Error("garbage parsed")
	}
}
