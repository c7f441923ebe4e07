package emu

// #cgo CXXFLAGS: -std=c++20 -O1 -fno-strict-aliasing -Wno-unknown-pragmas -I${SRCDIR}
// #include <stdlib.h>
// #include "emu.h"
import "C"

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"unsafe"
)

// cgoEnabled: this build has the emulator.
const cgoEnabled = true

// Names lists the kernels the emulator has: the ABI's (kernels.Names), then
// its own test kernels (emu_test_*).
func Names() []string {
	n := int(C.hx_emu_kernel_count())
	names := make([]string, n)
	for k := range names {
		names[k] = C.GoString(C.hx_emu_kernel_name(C.int(k)))
	}
	return names
}

// q8kRecord is HX_Q8K_REC as compiled into the emulator (TestQ8KRecord
// compares it with Q8KRecord).
func q8kRecord() int { return int(C.hx_emu_q8k_record()) }

// SourceHash is kernels.SourceHash of the sources compiled into the
// emulator (as scripts/build-ptx.sh recorded it in kernels_hash.h).
func SourceHash() string { return C.GoString(C.hx_emu_source_hash()) }

// mu serialises launches (the emulator runs one at a time) and guards
// live.
var mu sync.Mutex

// live holds the allocations of Alloc not yet freed, by address.
var live []*Mem

// lookup returns the index and signature of kernel name after checking
// the argument count and the launch shape.
func lookup(name string, nargs int, grid, block [3]int) (int, string, error) {
	k, sig := -1, ""
	for i := 0; i < int(C.hx_emu_kernel_count()); i++ {
		if C.GoString(C.hx_emu_kernel_name(C.int(i))) == name {
			k, sig = i, C.GoString(C.hx_emu_kernel_sig(C.int(i)))
			break
		}
	}
	if k < 0 {
		return 0, "", fmt.Errorf("emu: no kernel %s", name)
	}
	if nargs != len(sig) {
		return 0, "", fmt.Errorf("emu: %s takes %d arguments, got %d", name, len(sig), nargs)
	}
	threads := 1
	for i := range 3 {
		if grid[i] <= 0 || block[i] <= 0 || grid[i] > math.MaxInt32 || block[i] > 1024 {
			return 0, "", fmt.Errorf("emu: %s: bad grid %v or block %v", name, grid, block)
		}
		threads *= block[i]
	}
	if threads > 1024 {
		return 0, "", fmt.Errorf("emu: %s: bad grid %v or block %v (more than 1024 threads)", name, grid, block)
	}
	return k, sig, nil
}

// dims returns grid and block as C ints (C memory, freed by the caller).
func dims(grid, block [3]int) *[6]C.int {
	d := (*[6]C.int)(C.malloc(6 * C.size_t(unsafe.Sizeof(C.int(0)))))
	for i := range 3 {
		d[i], d[3+i] = C.int(grid[i]), C.int(block[i])
	}
	return d
}

// launchError turns the C side's result into an error.
func launchError(name string, msg *C.char) error {
	if msg == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(msg))
	return fmt.Errorf("emu: %s: %s", name, C.GoString(msg))
}

// Launch runs kernel name over grid × block threads with args (one per
// kernel parameter, in order). Slices are copied to emulator memory before
// the launch and back after it (for non-const parameters; a const one the
// kernel changed is an error). The same slice (same first element and
// length) passed twice is one buffer, so a kernel can run in place; other
// overlapping slices are an error.
//
// Launch returns an error for an unknown kernel, arguments that do not fit
// its parameters, a shape the emulator cannot run, or a failure of the
// kernel: __trap(), a barrier or shuffle not reached by every thread that
// must, a write to a const buffer. A read or write past the end of a
// buffer crashes the process (a guard page).
func Launch(name string, grid, block [3]int, args ...Arg) error {
	mu.Lock()
	defer mu.Unlock()
	k, sig, err := lookup(name, len(args), grid, block)
	if err != nil {
		return err
	}
	cargs := (*C.hx_emu_arg)(C.calloc(C.size_t(max(1, len(args))), C.size_t(unsafe.Sizeof(C.hx_emu_arg{}))))
	defer C.free(unsafe.Pointer(cargs))
	ca := unsafe.Slice(cargs, max(1, len(args)))
	var bufs []*buffer
	defer func() {
		for _, b := range bufs {
			C.hx_emu_free(b.mapping, b.mapLen)
		}
	}()
	for i, a := range args {
		want := sig[i]
		switch want {
		case 'n':
			v, ok := intArg(a)
			if !ok {
				return fmt.Errorf("emu: %s argument %d: want an int, got %T", name, i, a)
			}
			ca[i].i = C.int(v)
			continue
		case 'x':
			v, ok := floatArg(a)
			if !ok {
				return fmt.Errorf("emu: %s argument %d: want a float32, got %T", name, i, a)
			}
			ca[i].f = C.float(v)
			continue
		}
		if isNil(a) {
			ca[i].p = nil
			continue
		}
		src, elem, letter, ok := bytesOf(a)
		if !ok || letter != want|0x20 {
			return fmt.Errorf("emu: %s argument %d: want %s, got %T", name, i, pointerType(want), a)
		}
		b, err := bufferFor(&bufs, src, elem)
		if err != nil {
			return fmt.Errorf("emu: %s argument %d: %w", name, i, err)
		}
		b.writable = b.writable || want == letter
		ca[i].p = b.data
	}
	d := dims(grid, block)
	defer C.free(unsafe.Pointer(d))
	if err := launchError(name, C.hx_emu_launch(C.int(k), &d[0], &d[3], cargs)); err != nil {
		return err
	}
	var errs []error
	for _, b := range bufs {
		dev := unsafe.Slice((*byte)(b.data), len(b.src))
		if b.writable {
			copy(b.src, dev)
		} else if string(dev) != string(b.src) {
			errs = append(errs, fmt.Errorf("emu: %s wrote to a const buffer of %d elements", name, b.n))
		}
	}
	return errors.Join(errs...)
}

// buffer is the emulator memory of one slice argument of Launch.
type buffer struct {
	key      unsafe.Pointer // the slice's first element
	elem     int            // element size
	n        int            // elements
	data     unsafe.Pointer
	mapping  unsafe.Pointer
	mapLen   C.size_t
	src      []byte // the slice's bytes
	writable bool   // passed to a non-const parameter
}

// bufferFor returns the emulator buffer of src: an existing one when src
// is the same slice as an earlier argument, else a new one holding a copy.
func bufferFor(bufs *[]*buffer, src []byte, elem int) (*buffer, error) {
	key := unsafe.Pointer(unsafe.SliceData(src))
	lo, hi := uintptr(key), uintptr(key)+uintptr(len(src))
	for _, b := range *bufs {
		if b.key == key && len(b.src) == len(src) && b.elem == elem {
			return b, nil
		}
		blo, bhi := uintptr(b.key), uintptr(b.key)+uintptr(len(b.src))
		if len(src) > 0 && len(b.src) > 0 && lo < bhi && blo < hi {
			return nil, errors.New("overlaps another argument (only the very same slice may be passed twice)")
		}
	}
	b := &buffer{key: key, elem: elem, n: len(src) / elem, src: src}
	var mapping unsafe.Pointer
	var mapLen C.size_t
	b.data = C.hx_emu_alloc(C.size_t(len(src)), &mapping, &mapLen)
	if b.data == nil {
		return nil, fmt.Errorf("out of memory for %d bytes", len(src))
	}
	b.mapping, b.mapLen = mapping, mapLen
	copy(unsafe.Slice((*byte)(b.data), len(src)), src)
	*bufs = append(*bufs, b)
	return b, nil
}

// bytesOf returns the bytes of a supported slice, its element size and its
// signature letter (lower case: the mutable pointer).
func bytesOf(a Arg) (b []byte, elem int, letter byte, ok bool) {
	switch s := a.(type) {
	case []float32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s)), 4, 'f', true
	case []int32:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s)), 4, 'i', true
	case []uint16:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 2*len(s)), 2, 'h', true
	case []byte:
		return s, 1, 'b', true
	case []uint64:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 8*len(s)), 8, 'q', true
	}
	return nil, 0, 0, false
}

// isNil reports whether a is nil or a nil slice.
func isNil(a Arg) bool {
	switch s := a.(type) {
	case nil:
		return true
	case []float32:
		return s == nil
	case []int32:
		return s == nil
	case []uint16:
		return s == nil
	case []byte:
		return s == nil
	case []uint64:
		return s == nil
	}
	return false
}

func intArg(a Arg) (int, bool) {
	switch v := a.(type) {
	case int:
		return v, v >= math.MinInt32 && v <= math.MaxInt32
	case int32:
		return int(v), true
	}
	return 0, false
}

func floatArg(a Arg) (float32, bool) {
	switch v := a.(type) {
	case float32:
		return v, true
	case float64:
		return float32(v), true
	}
	return 0, false
}

func pointerType(letter byte) string {
	t := map[byte]string{'f': "[]float32", 'i': "[]int32", 'h': "[]uint16", 'b': "[]byte", 'q': "[]uint64"}[letter|0x20]
	if letter < 'a' {
		return t + " (const)"
	}
	return t
}

// Mem is emulator memory for LaunchRaw: n bytes of host memory that end
// where an inaccessible page begins, so a kernel reading or writing past
// the end crashes the process.
type Mem struct {
	data    unsafe.Pointer
	n       int
	mapping unsafe.Pointer
	mapLen  C.size_t
}

// Alloc returns n bytes of zeroed emulator memory.
func Alloc(n int) (*Mem, error) {
	if n < 0 {
		return nil, fmt.Errorf("emu: allocation of %d bytes", n)
	}
	m := &Mem{n: n}
	m.data = C.hx_emu_alloc(C.size_t(n), &m.mapping, &m.mapLen)
	if m.data == nil {
		return nil, fmt.Errorf("emu: out of memory for %d bytes", n)
	}
	mu.Lock()
	defer mu.Unlock()
	i := sort.Search(len(live), func(i int) bool { return live[i].Addr() > m.Addr() })
	live = append(live[:i], append([]*Mem{m}, live[i:]...)...)
	return m, nil
}

// Addr is the address of the first byte (what LaunchRaw takes as a
// pointer argument).
func (m *Mem) Addr() uintptr { return uintptr(m.data) }

// Len is the size in bytes.
func (m *Mem) Len() int { return m.n }

// Bytes is the memory as a slice, valid until Free.
func (m *Mem) Bytes() []byte { return unsafe.Slice((*byte)(m.data), m.n) }

// Free releases the memory (a second Free does nothing).
func (m *Mem) Free() {
	mu.Lock()
	defer mu.Unlock()
	for i, l := range live {
		if l == m {
			live = append(live[:i], live[i+1:]...)
			C.hx_emu_free(m.mapping, m.mapLen)
			m.data, m.mapping = nil, nil
			return
		}
	}
}

// LaunchRaw runs kernel name over grid × block threads with one 64-bit
// slot per parameter, as a CUDA launch takes them: the address of a
// pointer argument (inside memory from Alloc not yet freed, or 0 for a
// null pointer), an int in the low 32 bits, a float's bits in the low 32
// bits. Errors are Launch's, plus pointers outside every allocation.
func LaunchRaw(name string, grid, block [3]int, slots []uint64) error {
	mu.Lock()
	defer mu.Unlock()
	k, sig, err := lookup(name, len(slots), grid, block)
	if err != nil {
		return err
	}
	for i, s := range slots {
		if c := sig[i]; c == 'n' || c == 'x' || s == 0 {
			continue
		}
		j := sort.Search(len(live), func(j int) bool { return uint64(live[j].Addr()) > s }) - 1
		if j < 0 || s > uint64(live[j].Addr())+uint64(live[j].n) {
			return fmt.Errorf("emu: %s argument %d: address %#x is not emulator memory", name, i, s)
		}
	}
	cs := (*C.uint64_t)(C.malloc(C.size_t(8 * max(1, len(slots)))))
	defer C.free(unsafe.Pointer(cs))
	for i, s := range slots {
		unsafe.Slice(cs, len(slots))[i] = C.uint64_t(s)
	}
	d := dims(grid, block)
	defer C.free(unsafe.Pointer(d))
	return launchError(name, C.hx_emu_launch_raw(C.int(k), &d[0], &d[3], cs))
}

// halfToFloat and floatToHalf are the shim's F16 conversions (tested
// against pkg/compute/quant's).
func halfToFloat(h uint16) float32 { return float32(C.hx_emu_h2f(C.ushort(h))) }
func floatToHalf(f float32) uint16 { return uint16(C.hx_emu_f2h(C.float(f))) }
