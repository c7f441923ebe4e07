package cuda

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/sampling"
)

// logDriver is a driver without a device that logs what reaches it, and
// graphs that log what is done to them.
type logDriver struct {
	nullDriver
	log    []string
	graphs int
}

func (d *logDriver) launch(name string, g [3]int, _ int, a *args) error {
	d.log = append(d.log, fmt.Sprintf("launch %s %d %v", name, g[0], a.slots))
	return nil
}

func (d *logDriver) upload(devPtr, unsafe.Pointer, int64) error {
	d.log = append(d.log, "upload")
	return nil
}

func (d *logDriver) download(devPtr unsafe.Pointer, _ devPtr, _ int64) error {
	d.log = append(d.log, "download")
	return nil
}

func (d *logDriver) free(devPtr) { d.log = append(d.log, "free") }

func (d *logDriver) newGraph(recs []launchRec) (graph, error) {
	d.graphs++
	names := make([]string, len(recs))
	for i, r := range recs {
		names[i] = fmt.Sprintf("%s %d %v", r.name, r.grid[0], r.slots)
	}
	d.log = append(d.log, fmt.Sprintf("build g%d [%s]", d.graphs, strings.Join(names, ", ")))
	return &logGraph{d: d, id: d.graphs}, nil
}

type logGraph struct {
	d  *logDriver
	id int
}

func (g *logGraph) set(i int, r *launchRec) error {
	g.d.log = append(g.d.log, fmt.Sprintf("set g%d %d %s %d %v", g.id, i, r.name, r.grid[0], r.slots))
	return nil
}

func (g *logGraph) run() error {
	g.d.log = append(g.d.log, fmt.Sprintf("run g%d", g.id))
	return nil
}

func (g *logGraph) destroy() { g.d.log = append(g.d.log, fmt.Sprintf("destroy g%d", g.id)) }

func TestGraphDriver(t *testing.T) {
	ld := &logDriver{}
	d := withGraphs(ld)
	var out [4]byte
	step := func(grid, pos int) []string {
		ld.log = nil
		if err := d.upload(0, nil, 4); err != nil {
			t.Fatal(err)
		}
		for _, l := range []struct {
			name string
			a    *args
		}{{"a", newArgs(2).ptr(16).i32(pos)}, {"b", newArgs(1).ptr(32)}, {"c", newArgs(1).i32(grid)}, {"d", newArgs(0)}} {
			if err := d.launch(l.name, [3]int{grid, 1, 1}, 256, l.a); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.download(unsafe.Pointer(&out[0]), 0, 4); err != nil {
			t.Fatal(err)
		}
		return ld.log
	}
	steps := []struct {
		grid, pos int
		want      []string
	}{
		// The first time: launch by launch, after the upload that came first.
		{1, 7, []string{"upload", "launch a 1 [16 7]", "launch b 1 [32]", "launch c 1 [1]", "launch d 1 []", "download"}},
		// The second: a graph with this step's parameters.
		{1, 8, []string{"upload", "build g1 [a 1 [16 8], b 1 [32], c 1 [1], d 1 []]", "run g1", "download"}},
		// Then only what changed is set.
		{1, 9, []string{"upload", "set g1 0 a 1 [16 9]", "run g1", "download"}},
		{2, 9, []string{"upload", "set g1 0 a 2 [16 9]", "set g1 1 b 2 [32]", "set g1 2 c 2 [2]", "set g1 3 d 2 []", "run g1", "download"}},
		{2, 9, []string{"upload", "run g1", "download"}},
	}
	for i, s := range steps {
		if got := step(s.grid, s.pos); !slices.Equal(got, s.want) {
			t.Errorf("step %d:\n got %q\nwant %q", i, got, s.want)
		}
	}
}

func TestGraphDriverSegments(t *testing.T) {
	ld := &logDriver{}
	d := withGraphs(ld).(*graphDriver)
	run := func() {
		ld.log = nil
		for i := range maxSegment + 3 {
			if err := d.launch("k", [3]int{1, 1, 1}, 32, newArgs(1).i32(i)); err != nil {
				t.Fatal(err)
			}
			if i == maxSegment+1 { // a copy splits the rest
				if err := d.copyD(0, 0, 1); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := d.download(nil, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if n := len(ld.log); n != maxSegment+4 || ld.log[maxSegment+3] != "download" {
		t.Fatalf("first run: %d events, last %q", n, ld.log[n-1])
	}
	run()
	want := []string{"build g1", "run g1", "launch k 1 [96]", "launch k 1 [97]", "launch k 1 [98]", "download"}
	if len(ld.log) != len(want) {
		t.Fatalf("second run: %q", ld.log)
	}
	for i, w := range want {
		if !strings.HasPrefix(ld.log[i], w) {
			t.Errorf("second run, event %d: %q, want %q", i, ld.log[i], w)
		}
	}
	if d.stats.built != 1 || d.stats.direct != 5 {
		t.Errorf("stats %+v", d.stats)
	}
}

// TestGraphDriverFree wants the launches recorded before a free sent
// before it (they may use the memory), and a failure to send them
// returned by the next call.
func TestGraphDriverFree(t *testing.T) {
	ld := &logDriver{}
	d := withGraphs(ld).(*graphDriver)
	if err := d.launch("k", [3]int{1, 1, 1}, 32, newArgs(1).ptr(64)); err != nil {
		t.Fatal(err)
	}
	d.free(64)
	if want := []string{"launch k 1 [64]", "free"}; !slices.Equal(ld.log, want) {
		t.Fatalf("log %q, want %q", ld.log, want)
	}
	fd := &failDriver{}
	d = withGraphs(fd).(*graphDriver)
	if err := d.launch("k", [3]int{1, 1, 1}, 32, newArgs(0)); err != nil {
		t.Fatal(err)
	}
	d.free(64)
	if err := d.upload(0, nil, 0); err == nil || !strings.Contains(err.Error(), "no device") {
		t.Fatalf("upload after a failed send in free: %v", err)
	}
	if err := d.upload(0, nil, 0); err != nil {
		t.Fatalf("the failure was returned once; then %v", err)
	}
}

// failDriver fails every launch.
type failDriver struct{ nullDriver }

func (failDriver) launch(string, [3]int, int, *args) error { return fmt.Errorf("no device") }

func TestGraphDriverEvicts(t *testing.T) {
	ld := &logDriver{}
	d := withGraphs(ld).(*graphDriver)
	for range 2 {
		for shape := range maxGraphs + 1 {
			for range shape + minGraph {
				if err := d.launch("k", [3]int{1, 1, 1}, 32, newArgs(0)); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.download(nil, 0, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(d.graphs) != maxGraphs || !slices.Contains(ld.log, "destroy g1") {
		t.Fatalf("%d graphs kept; log ends %q", len(d.graphs), ld.log[len(ld.log)-3:])
	}
}

// TestGraphsMatchLaunches decodes on the emulated GPU with graphs and with
// every launch sent on its own, past several changes of the attention's
// split count, and wants the same logits bit for bit, with most steps
// replayed.
func TestGraphsMatchLaunches(t *testing.T) {
	if testing.Short() {
		t.Skip("emulates the GPU kernels of a model")
	}
	decode := func(d driver) [][]float32 {
		ex, err := local.Load(context.Background(), fixtures.Path(t, "models", "llama-q-Q4_K_M.gguf"),
			local.Options{LoadOptions: executor.LoadOptions{NumCtx: 128, NumBlocks: 8, Parallel: 1}, Device: newBackend(d)})
		if err != nil {
			t.Fatal(err)
		}
		defer ex.Close()
		s, err := executor.NewSession(ex, sampling.Params{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var logits [][]float32
		tok := int32(1)
		for range 70 {
			res, err := s.Prefill(context.Background(), []int32{tok}, executor.LogitsLast)
			if err != nil {
				t.Fatal(err)
			}
			logits = append(logits, res.Logits[0])
			tok = res.Token
		}
		return logits
	}
	emu := func() *emuDriver {
		return &emuDriver{total: 1 << 30, inf: Info{Name: "emulated", Major: 9, TotalBytes: 1 << 30}}
	}
	want := decode(emu())
	gd := withGraphs(emu()).(*graphDriver)
	got := decode(gd)
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("step %d: logits differ with graphs", i)
		}
	}
	if gd.stats.replayed < 60 || gd.stats.set == 0 {
		t.Errorf("graph stats %+v: want most steps replayed, with parameters set", gd.stats)
	}
}
