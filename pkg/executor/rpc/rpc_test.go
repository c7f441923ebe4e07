package rpc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/sampling"
)

// childEnv makes the test binary act as a runner serving fakeExec.
var childEnv = envvars.TestRunner.Name

func TestMain(m *testing.M) {
	if envvars.TestRunner.Get() == "1" {
		err := Serve(context.Background(), os.Stdin, os.Stdout, openFake, nil)
		if err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// pipeRemote serves fakeExec in-process over pipes.
func pipeRemote(t testing.TB, timeout time.Duration) *Remote {
	t.Helper()
	reqR, reqW := io.Pipe()
	repR, repW := io.Pipe()
	go func() {
		_ = Serve(context.Background(), reqR, repW, openFake, nil)
		repW.Close()
	}()
	r, err := Connect(context.Background(), repR, reqW, LoadParams{Path: "x"}, nil, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); reqW.Close() })
	return r
}

func childRemote(t testing.TB, timeout time.Duration) *Remote {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Start(context.Background(), ProcessOptions{Path: exe, Env: append(os.Environ(), childEnv+"=1"),
		Name: "fake", Timeout: timeout}, LoadParams{Path: "x"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remote func(testing.TB, time.Duration) *Remote
	}{{"pipe", pipeRemote}, {"process", childRemote}} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.remote(t, 10*time.Second)
			if r.Info().Arch != "fake" || r.Info().NCtx != 64 {
				t.Fatalf("info %+v", r.Info())
			}
			id, err := r.NewSeq(sampling.Params{LogitBias: map[int32]float32{7: float32(math.Inf(-1))}})
			if err != nil {
				t.Fatal(err)
			}
			plain, _ := r.NewSeq(sampling.Params{})
			res, err := r.Step(context.Background(), []executor.Work{
				{Seq: id, Tokens: []int32{1, 2}, Pos: 3, Blocks: []int32{0}, Sample: true, Logits: executor.LogitsAll},
				{Seq: plain, Tokens: []int32{5}, Blocks: []int32{1}, Sample: true, Allowed: []uint64{1, 1 << 63}},
				{Seq: 99, Tokens: []int32{1}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Token != 0 || !math.IsInf(float64(res[0].Logprob), -1) || len(res[0].Top) != 1 {
				t.Errorf("result 0 %+v (the -Inf logit bias and logprob must cross intact)", res[0])
			}
			if len(res[0].Logits) != 2 || res[0].Logits[1][0] != 4 || !math.IsInf(float64(res[0].Logits[1][1]), -1) ||
				!math.IsNaN(float64(res[0].Logits[1][3])) {
				t.Errorf("logits %v", res[0].Logits)
			}
			if res[1].Token != 5 || res[1].Err != nil {
				t.Errorf("result 1 %+v (the mask of 2 words must cross)", res[1])
			}
			if res[2].Err == nil || res[2].Err.Kind != executor.KindBadRequest || !errors.Is(res[2].Err, executor.ErrBadRequest) {
				t.Errorf("result 2 err %v, want a bad_request kind", res[2].Err)
			}
			if _, err := r.NewSeq(sampling.Params{TopK: -1}); !errors.Is(err, executor.ErrBadRequest) {
				t.Errorf("bad params: %v, want ErrBadRequest across the pipe", err)
			}
			if m := r.Memory(); m.FreeBytes != 300 {
				t.Errorf("memory %+v", m)
			}
			r.FreeSeq(id)
			if err := r.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
}

func TestServeRejectsBadRequests(t *testing.T) {
	in := strings.Join([]string{
		`{"id":1,"op":"step","params":{"works":[]}}`,
		`not json`,
		`{"id":2,"op":"load","params":{"path":"missing"}}`,
		`{"id":3,"op":"load","params":{"path":"x"}}`,
		`{"id":4,"op":"frobnicate"}`,
		`{"id":5,"op":"load","params":{"path":"x"}}`,
		`{"id":6,"op":"step","params":{"works":[{"seq":1,"tokens":[1],"allowed":"%%%","has_allowed":true}]}}`,
		`{"id":7,"op":"close"}`,
		`{"id":8,"op":"ping"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := Serve(context.Background(), strings.NewReader(in), &out, openFake, nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`{"id":1,"error":{"kind":"bad_request","message":"op \"step\" before a model is loaded (send \"load\" first)"}}`,
		`"id":0,"error":{"kind":"bad_request","message":"malformed request`,
		`{"id":2,"error":{"kind":"bad_request","message":"model file missing does not exist"}}`,
		`{"id":3,"result":{"arch":"fake"`,
		`{"id":4,"error":{"kind":"unsupported","message":"unknown op \"frobnicate\""}}`,
		`{"id":5,"error":{"kind":"bad_request","message":"a model is already loaded`,
		`{"id":6,"error":{"kind":"bad_request","message":"token mask of sequence 1 is not base64`,
		`{"id":7,"result":{}}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d replies (one per request up to close), want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("reply %d = %s\nwant it to contain %s", i, lines[i], w)
		}
	}
}

// TestDeadRunner: a runner that dies mid-step fails the step at once with
// a device error, and every later call fails the same way.
func TestDeadRunner(t *testing.T) {
	r := childRemote(t, 30*time.Second)
	id, _ := r.NewSeq(sampling.Params{})
	start := time.Now()
	_, err := r.Step(context.Background(), []executor.Work{{Seq: id, Tokens: []int32{tokExit}, Blocks: []int32{0}}})
	if !errors.Is(err, executor.ErrDevice) {
		t.Fatalf("step on a dying runner: %v, want a device error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("death noticed after %s", d)
	}
	select {
	case <-r.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("Exited not closed")
	}
	if _, err := r.NewSeq(sampling.Params{}); !errors.Is(err, executor.ErrDevice) {
		t.Errorf("call after death: %v", err)
	}
	if r.ExitErr() == nil {
		t.Error("ExitErr nil after death")
	}
}

// TestHungRunner: a runner that stops answering is killed after the
// timeout, and its step fails with a device error.
func TestHungRunner(t *testing.T) {
	r := childRemote(t, 500*time.Millisecond)
	id, _ := r.NewSeq(sampling.Params{})
	_, err := r.Step(context.Background(), []executor.Work{{Seq: id, Tokens: []int32{tokHang}, Blocks: []int32{0}}})
	if !errors.Is(err, executor.ErrDevice) || !strings.Contains(err.Error(), "no reply to step") {
		t.Fatalf("hung step: %v", err)
	}
	select {
	case <-r.proc.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("hung runner not killed")
	}
}

// TestPanicInStep: a panic in the runner's executor is a device error in
// its reply; the runner keeps answering.
func TestPanicInStep(t *testing.T) {
	r := pipeRemote(t, 10*time.Second)
	id, _ := r.NewSeq(sampling.Params{})
	_, err := r.Step(context.Background(), []executor.Work{{Seq: id, Tokens: []int32{tokPanic}, Blocks: []int32{0}}})
	if !errors.Is(err, executor.ErrDevice) {
		t.Fatalf("panicking step: %v", err)
	}
	if err := r.Ping(context.Background()); err != nil {
		t.Errorf("ping after panic: %v", err)
	}
}

// TestCancelledStepDrains: a step whose context ends after it was sent is
// still waited for, so the next call gets its own reply.
func TestCancelledStepDrains(t *testing.T) {
	r := pipeRemote(t, 10*time.Second)
	id, _ := r.NewSeq(sampling.Params{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Step(ctx, []executor.Work{{Seq: id, Tokens: []int32{1}, Blocks: []int32{0}}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("step with an ended context: %v, want it refused before sending", err)
	}
	res, err := r.Step(context.Background(), []executor.Work{{Seq: id, Tokens: []int32{4}, Blocks: []int32{0}}})
	if err != nil || res[0].Token != 4 {
		t.Fatalf("next step: %+v %v", res, err)
	}
}

// TestLoadCancelled: ending the load's context kills a runner stuck in
// its load.
func TestLoadCancelled(t *testing.T) {
	exe, _ := os.Executable()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Start(ctx, ProcessOptions{Path: exe, Env: append(os.Environ(), childEnv+"=1")}, LoadParams{Path: "slow"})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("load of a slow model with a deadline: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancelled load returned after %s", d)
	}
}
