package cuda

import (
	"context"
	"testing"
	"unsafe"

	"github.com/helexa/helexa/internal/fixtures"
	"github.com/helexa/helexa/pkg/executor"
	"github.com/helexa/helexa/pkg/executor/local"
	"github.com/helexa/helexa/pkg/sampling"
)

// nullDriver is a driver without a device: allocations are addresses that
// are never read, transfers and launches do nothing (downloads read
// zeros), and its graphs run nothing. Over it a decode step costs what
// the backend and the layers above it spend on the host, the GPU's work
// excluded.
type nullDriver struct {
	next     devPtr
	launches int
}

func (d *nullDriver) do(f func() error) error { return f() }
func (d *nullDriver) pinned(f func())         { f() }
func (d *nullDriver) alloc(n int64) (devPtr, error) {
	p := d.next + 1<<20
	d.next += devPtr((n+255)/256*256) + 256
	return p, nil
}
func (d *nullDriver) free(devPtr)                                {}
func (d *nullDriver) upload(devPtr, unsafe.Pointer, int64) error { return nil }
func (d *nullDriver) copyD(devPtr, devPtr, int64) error          { return nil }
func (d *nullDriver) zero(devPtr, int64) error                   { return nil }
func (d *nullDriver) memInfo() (free, total int64, err error)    { return 64 << 30, 64 << 30, nil }
func (d *nullDriver) gemmer() gemmer                             { return nullGemm{} }
func (d *nullDriver) info() Info                                 { return Info{Name: "null", Major: 9, TotalBytes: 64 << 30} }
func (d *nullDriver) close()                                     {}
func (d *nullDriver) download(dst unsafe.Pointer, _ devPtr, n int64) error {
	clear(unsafe.Slice((*byte)(dst), n))
	return nil
}
func (d *nullDriver) launch(string, [3]int, int, *args) error {
	d.launches++
	return nil
}
func (d *nullDriver) newGraph(recs []launchRec) (graph, error) { return &nullGraph{d, len(recs)}, nil }

type nullGraph struct {
	d *nullDriver
	n int
}

func (g *nullGraph) set(int, *launchRec) error { return nil }
func (g *nullGraph) run() error                { g.d.launches += g.n; return nil }
func (g *nullGraph) destroy()                  {}

type nullGemm struct{}

func (nullGemm) gemmF16(w, x, out devPtr, rows, cols, n, ldo int) error { return nil }
func (nullGemm) gemmF32(w, x, out devPtr, rows, cols, n, ldo int) error { return nil }

// BenchmarkHostDecode is the host's share of a greedy decode step on the
// CUDA backend (GPU work excluded: the driver does nothing), per step and
// per kernel launch, with the launches sent one by one and as graphs. On
// a GPU the host issues a step's launches while the GPU runs them, so
// this bounds decode tokens/s from above.
func BenchmarkHostDecode(b *testing.B) {
	for _, model := range []string{"llama-q-Q4_K_M.gguf", "qwen3-tiny-Q8_0.gguf"} {
		for _, graphs := range []bool{false, true} {
			name := model + "/launches"
			if graphs {
				name = model + "/graphs"
			}
			b.Run(name, func(b *testing.B) { benchHostDecode(b, fixtures.Path(b, "models", model), graphs) })
		}
	}
}

func benchHostDecode(b *testing.B, path string, graphs bool) {
	nd := &nullDriver{}
	var d driver = nd
	if graphs {
		d = withGraphs(nd)
	}
	ex, err := local.Load(context.Background(), path, local.Options{LoadOptions: executor.LoadOptions{NumCtx: 512, NumBlocks: 32, Parallel: 1}, Device: newBackend(d)})
	if err != nil {
		b.Fatal(err)
	}
	defer ex.Close()
	ctx := context.Background()
	var s *executor.Session
	start := func() {
		if s != nil {
			s.Close()
		}
		if s, err = executor.NewSession(ex, sampling.Params{}); err != nil {
			b.Fatal(err)
		}
		s.NoLogprob = true
		if _, err := s.Prefill(ctx, []int32{1, 2, 3, 4}, executor.LogitsNone); err != nil {
			b.Fatal(err)
		}
	}
	start()
	defer func() { s.Close() }()
	nd.launches = 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s.Pos() >= 500 {
			b.StopTimer()
			start()
			b.StartTimer()
		}
		if _, err := s.Prefill(ctx, []int32{int32(5 + i%7)}, executor.LogitsNone); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(nd.launches)/float64(b.N), "launches/step")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(nd.launches, 1)), "ns/launch")
}
