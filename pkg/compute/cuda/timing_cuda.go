//go:build cuda

package cuda

/*
#include <cuda.h>
*/
import "C"

import (
	"fmt"
	"os"
)

// kernelTimer measures the GPU time of every launch with a pair of events
// around it (HELEXA_CUDA_TIMES): a profiler for machines where ncu and
// nsys are missing or lack the counters' permission. Recording events
// costs host time, so step figures taken with it on are not the engine's.
type kernelTimer struct {
	path    string
	pending []timedLaunch
	free    []C.CUevent
	total   map[string]*kernelTime
	// span is the GPU time from the first timed launch of each flush to
	// its last: with the kernels' sum, how busy the host kept the GPU.
	span float64
}

type timedLaunch struct {
	name       string
	start, end C.CUevent
}

// timerFlushAt is how many launches wait before their times are read (one
// stream synchronisation per this many launches).
const timerFlushAt = 4096

func newKernelTimer(path string) *kernelTimer {
	return &kernelTimer{path: path, total: map[string]*kernelTime{}}
}

func (t *kernelTimer) event() (C.CUevent, error) {
	if n := len(t.free); n > 0 {
		e := t.free[n-1]
		t.free = t.free[:n-1]
		return e, nil
	}
	var e C.CUevent
	if r := C.cuEventCreate(&e, C.CU_EVENT_DEFAULT); r != C.CUDA_SUCCESS {
		return nil, fmt.Errorf("cuEventCreate: %d", int(r))
	}
	return e, nil
}

// around launches with launch between two recorded events.
func (t *kernelTimer) around(name string, launch func() error) error {
	start, err := t.event()
	if err != nil {
		return err
	}
	end, err := t.event()
	if err != nil {
		return err
	}
	C.cuEventRecord(start, nil)
	if err := launch(); err != nil {
		return err
	}
	C.cuEventRecord(end, nil)
	t.pending = append(t.pending, timedLaunch{name, start, end})
	if len(t.pending) >= timerFlushAt {
		return t.flush()
	}
	return nil
}

// flush waits for the pending launches, adds their times and rewrites the
// table at path.
func (t *kernelTimer) flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	last := t.pending[len(t.pending)-1].end
	if r := C.cuEventSynchronize(last); r != C.CUDA_SUCCESS {
		return fmt.Errorf("cuEventSynchronize: %d", int(r))
	}
	var span C.float
	C.cuEventElapsedTime(&span, t.pending[0].start, last)
	t.span += float64(span)
	for _, l := range t.pending {
		var ms C.float
		C.cuEventElapsedTime(&ms, l.start, l.end)
		k := t.total[l.name]
		if k == nil {
			k = &kernelTime{}
			t.total[l.name] = k
		}
		k.launches++
		k.ms += float64(ms)
		t.free = append(t.free, l.start, l.end)
	}
	t.pending = t.pending[:0]
	return os.WriteFile(t.path, []byte(t.table()), 0o644)
}

// table lists the kernels by total time, largest first.
func (t *kernelTimer) table() string { return timeTable(t.total, t.span) }

func (t *kernelTimer) close() {
	_ = t.flush()
	for _, e := range t.free {
		C.cuEventDestroy(e)
	}
	t.free = nil
}

// timedDriver is a driver whose launches and cuBLAS products are timed
// (Options.KernelTimes); its calls run inside do, on the owner goroutine,
// which alone touches the timer.
type timedDriver struct {
	driver
	t *kernelTimer
}

func (d *timedDriver) launch(name string, grid [3]int, block int, a *args) error {
	return d.t.around(name, func() error { return d.driver.launch(name, grid, block, a) })
}

func (d *timedDriver) gemmer() gemmer {
	g := d.driver.gemmer()
	if g == nil {
		return nil
	}
	return timedGemmer{g, d.t}
}

// close writes the last times and frees the events, then closes the
// device.
func (d *timedDriver) close() {
	_ = d.driver.do(func() error { d.t.close(); return nil })
	d.driver.close()
}

// timedGemmer times cuBLAS's products as kernels named by their types.
type timedGemmer struct {
	b gemmer
	t *kernelTimer
}

func (g timedGemmer) gemmF16(w, x, out devPtr, rows, cols, n, ldo int) error {
	return g.t.around("cublas_gemm_f16", func() error { return g.b.gemmF16(w, x, out, rows, cols, n, ldo) })
}

func (g timedGemmer) gemmF32(w, x, out devPtr, rows, cols, n, ldo int) error {
	return g.t.around("cublas_gemm_f32", func() error { return g.b.gemmF32(w, x, out, rows, cols, n, ldo) })
}
