package cuda

import "unsafe"

// writeCounter is a driver that counts the calls that may write device
// memory (uploads, copies, clears, launches, GEMMs), so that the backend
// can tell whether a buffer it derived from another is still current: the
// count has not moved since (see preRounded).
type writeCounter struct {
	driver
	n uint64
}

func (w *writeCounter) upload(dst devPtr, src unsafe.Pointer, n int64) error {
	w.n++
	return w.driver.upload(dst, src, n)
}

func (w *writeCounter) copyD(dst, src devPtr, n int64) error {
	w.n++
	return w.driver.copyD(dst, src, n)
}

func (w *writeCounter) zero(p devPtr, n int64) error {
	w.n++
	return w.driver.zero(p, n)
}

func (w *writeCounter) launch(name string, grid [3]int, block int, a *args) error {
	w.n++
	return w.driver.launch(name, grid, block, a)
}

func (w *writeCounter) gemmer() gemmer {
	g := w.driver.gemmer()
	if g == nil {
		return nil
	}
	return countedGemmer{g, &w.n}
}

type countedGemmer struct {
	g gemmer
	n *uint64
}

func (c countedGemmer) gemmF16(w, x, out devPtr, rows, cols, n, ldo int) error {
	*c.n++
	return c.g.gemmF16(w, x, out, rows, cols, n, ldo)
}

func (c countedGemmer) gemmF32(w, x, out devPtr, rows, cols, n, ldo int) error {
	*c.n++
	return c.g.gemmF32(w, x, out, rows, cols, n, ldo)
}
