//go:build !cgo

package emu

import "errors"

// cgoEnabled: without cgo there is no emulator.
const cgoEnabled = false

var errNoCgo = errors.New("emu: the kernel emulator needs cgo (and a C++20 compiler)")

// Names lists no kernels without cgo.
func Names() []string { return nil }

// SourceHash is "" without cgo.
func SourceHash() string { return "" }

// Launch fails without cgo.
func Launch(name string, grid, block [3]int, args ...Arg) error { return errNoCgo }

// LaunchRaw fails without cgo.
func LaunchRaw(name string, grid, block [3]int, slots []uint64) error { return errNoCgo }

// Mem is emulator memory (none without cgo).
type Mem struct{}

// Alloc fails without cgo.
func Alloc(n int) (*Mem, error) { return nil, errNoCgo }

// Addr is 0 without cgo.
func (m *Mem) Addr() uintptr { return 0 }

// Len is 0 without cgo.
func (m *Mem) Len() int { return 0 }

// Bytes is nil without cgo.
func (m *Mem) Bytes() []byte { return nil }

// Free does nothing without cgo.
func (m *Mem) Free() {}

// the tests' hooks (the tests skip without cgo)
func halfToFloat(uint16) float32 { return 0 }
func floatToHalf(float32) uint16 { return 0 }

// q8kRecord is Q8KRecord without cgo (no kernels to ask).
func q8kRecord() int { return Q8KRecord }
