package cuda

import (
	"fmt"
	"hash/maphash"
	"slices"
	"unsafe"
)

// A decode step launches the same few hundred small kernels every token,
// and each launch costs the host a driver call and the GPU a gap between
// kernels. graphDriver records launches instead of sending them and sends
// each run of them (a segment) when something must see their effects (a
// transfer, a copy, a GEMM, a free) or once maxSegment launches wait.
// A segment goes as one device graph when the same segment (the same
// kernels with the same block sizes, in the same place since the last
// download) went before: the graph built then is launched again with only
// the grids and parameters that changed set anew. A segment seen for the
// first time is launched kernel by kernel, so that one-off shapes build
// no graph.

// maxSegment is the most launches that wait for the next send: the GPU
// runs one segment while the host records the next.
const maxSegment = 96

// minGraph is the fewest launches a graph is built for: a graph of fewer
// saves nothing.
const minGraph = 4

// maxGraphs is how many graphs stay instantiated (the least recently used
// goes first): a few segments per decode step, for a few batch sizes.
const maxGraphs = 64

// launchRec is one recorded launch.
type launchRec struct {
	name  string
	grid  [3]int
	block int
	slots []uint64
}

// grapher is a driver that can send recorded launches as one graph.
type grapher interface {
	newGraph(recs []launchRec) (graph, error)
}

// graph is an instantiated graph of kernel launches, one node per launch
// in order, each node after the one before.
type graph interface {
	// set gives node i r's grid and parameters (r has the node's kernel
	// and block size).
	set(i int, r *launchRec) error
	// run sends the graph after the work sent before it.
	run() error
	destroy()
}

// segKey identifies a segment: its place since the last download and a
// hash of its kernels and block sizes.
type segKey struct {
	ordinal, n int
	hash       uint64
}

// cachedGraph is a built graph and the launches it holds now.
type cachedGraph struct {
	g    graph
	recs []launchRec
	used uint64
}

// graphDriver is a driver whose launches are recorded and sent as graphs
// (see above); its calls run inside do, on the owner goroutine.
type graphDriver struct {
	driver
	g       grapher
	recs    []launchRec
	arena   []uint64 // the recorded launches' parameter slots
	ordinal int      // segments sent since the last download
	seed    maphash.Seed
	seen    map[segKey]bool
	graphs  map[segKey]*cachedGraph
	clock   uint64
	err     error // a send's failure inside free, returned by the next call
	stats   graphStats
}

// graphStats counts what became of the segments sent.
type graphStats struct {
	direct, built, replayed, set int
}

// withGraphs wraps d so that its launches go as graphs, when d can build
// them.
func withGraphs(d driver) driver {
	g, ok := d.(grapher)
	if !ok {
		return d
	}
	return &graphDriver{driver: d, g: g, seed: maphash.MakeSeed(), seen: map[segKey]bool{}, graphs: map[segKey]*cachedGraph{}}
}

func (d *graphDriver) launch(name string, grid [3]int, block int, a *args) error {
	start := len(d.arena)
	d.arena = append(d.arena, a.slots...)
	d.recs = append(d.recs, launchRec{name: name, grid: grid, block: block, slots: d.arena[start:len(d.arena):len(d.arena)]})
	if len(d.recs) >= maxSegment {
		return d.send()
	}
	return nil
}

// send sends the recorded launches.
func (d *graphDriver) send() error {
	if err := d.err; err != nil {
		d.err = nil
		return err
	}
	if len(d.recs) == 0 {
		return nil
	}
	recs := d.recs
	defer func() { d.recs, d.arena = d.recs[:0], d.arena[:0] }()
	d.ordinal++
	if len(recs) < minGraph {
		d.stats.direct++
		return d.direct(recs)
	}
	key := d.key(recs)
	d.clock++
	if c := d.graphs[key]; c != nil {
		if sameShape(c.recs, recs) {
			c.used = d.clock
			d.stats.replayed++
			return d.replay(c, recs)
		}
		c.g.destroy() // a hash collision: forget the graph
		delete(d.graphs, key)
	}
	if !d.seen[key] {
		if len(d.seen) >= 4*maxGraphs {
			clear(d.seen)
		}
		d.seen[key] = true
		d.stats.direct++
		return d.direct(recs)
	}
	g, err := d.g.newGraph(recs)
	if err != nil {
		return fmt.Errorf("building a graph of %d launches: %w", len(recs), err)
	}
	d.evict()
	d.stats.built++
	c := &cachedGraph{g: g, recs: cloneRecs(recs), used: d.clock}
	d.graphs[key] = c
	return g.run()
}

// key is the segment's segKey.
func (d *graphDriver) key(recs []launchRec) segKey {
	var h maphash.Hash
	h.SetSeed(d.seed)
	for i := range recs {
		h.WriteString(recs[i].name)
		h.WriteByte(byte(recs[i].block >> 5))
	}
	return segKey{ordinal: d.ordinal, n: len(recs), hash: h.Sum64()}
}

// sameShape reports whether two segments launch the same kernels with the
// same block sizes and parameter counts.
func sameShape(a, b []launchRec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || a[i].block != b[i].block || len(a[i].slots) != len(b[i].slots) {
			return false
		}
	}
	return true
}

// replay sets the nodes whose launches changed and runs the graph.
func (d *graphDriver) replay(c *cachedGraph, recs []launchRec) error {
	for i := range recs {
		r, old := &recs[i], &c.recs[i]
		if r.grid == old.grid && slices.Equal(r.slots, old.slots) {
			continue
		}
		d.stats.set++
		if err := c.g.set(i, r); err != nil {
			return fmt.Errorf("updating %s in a graph: %w", r.name, err)
		}
		old.grid = r.grid
		copy(old.slots, r.slots)
	}
	return c.g.run()
}

// direct launches recs one by one.
func (d *graphDriver) direct(recs []launchRec) error { return launchEach(d.driver, recs) }

// launchEach launches recs on d one by one, in order.
func launchEach(d driver, recs []launchRec) error {
	for i := range recs {
		r := &recs[i]
		if err := d.launch(r.name, r.grid, r.block, &args{slots: r.slots}); err != nil {
			return err
		}
	}
	return nil
}

// evict destroys the least recently used graph when the cache is full.
func (d *graphDriver) evict() {
	if len(d.graphs) < maxGraphs {
		return
	}
	var oldest segKey
	var at uint64
	first := true
	for k, c := range d.graphs {
		if first || c.used < at {
			oldest, at, first = k, c.used, false
		}
	}
	d.graphs[oldest].g.destroy()
	delete(d.graphs, oldest)
}

// cloneRecs copies recs and their slots.
func cloneRecs(recs []launchRec) []launchRec {
	n := 0
	for i := range recs {
		n += len(recs[i].slots)
	}
	slots := make([]uint64, 0, n)
	out := make([]launchRec, len(recs))
	for i, r := range recs {
		start := len(slots)
		slots = append(slots, r.slots...)
		r.slots = slots[start:len(slots):len(slots)]
		out[i] = r
	}
	return out
}

// The calls below see device memory or the order of work: the recorded
// launches go first.

func (d *graphDriver) upload(dst devPtr, src unsafe.Pointer, n int64) error {
	if err := d.send(); err != nil {
		return err
	}
	return d.driver.upload(dst, src, n)
}

func (d *graphDriver) download(dst unsafe.Pointer, src devPtr, n int64) error {
	if err := d.send(); err != nil {
		return err
	}
	d.ordinal = 0
	return d.driver.download(dst, src, n)
}

func (d *graphDriver) copyD(dst, src devPtr, n int64) error {
	if err := d.send(); err != nil {
		return err
	}
	return d.driver.copyD(dst, src, n)
}

func (d *graphDriver) zero(p devPtr, n int64) error {
	if err := d.send(); err != nil {
		return err
	}
	return d.driver.zero(p, n)
}

// free sends first: a recorded launch may use the memory. A failure to
// send is returned by the next call.
func (d *graphDriver) free(p devPtr) {
	if err := d.send(); err != nil && d.err == nil {
		d.err = err
	}
	d.driver.free(p)
}

func (d *graphDriver) gemmer() gemmer {
	g := d.driver.gemmer()
	if g == nil {
		return nil
	}
	return sendingGemmer{g, d}
}

// close drops what was recorded and the graphs, then closes the device.
func (d *graphDriver) close() {
	_ = d.driver.do(func() error {
		for _, c := range d.graphs {
			c.g.destroy()
		}
		clear(d.graphs)
		d.recs, d.arena = nil, nil
		return nil
	})
	d.driver.close()
}

// sendingGemmer sends the recorded launches before each product.
type sendingGemmer struct {
	g gemmer
	d *graphDriver
}

func (s sendingGemmer) gemmF16(w, x, out devPtr, rows, cols, n, ldo int) error {
	if err := s.d.send(); err != nil {
		return err
	}
	return s.g.gemmF16(w, x, out, rows, cols, n, ldo)
}

func (s sendingGemmer) gemmF32(w, x, out devPtr, rows, cols, n, ldo int) error {
	if err := s.d.send(); err != nil {
		return err
	}
	return s.g.gemmF32(w, x, out, rows, cols, n, ldo)
}
