package kernels

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

func TestPTXHasEveryKernel(t *testing.T) {
	for _, build := range []struct {
		name string
		ptx  string
	}{{"helexa_sm80.ptx", ptxSM80}, {"helexa_sm90.ptx", ptxSM90}} {
		for _, n := range Names() {
			if !strings.Contains(build.ptx, ".entry "+n+"(") {
				t.Errorf("%s has no kernel %s: run make ptx (scripts/build-ptx.sh)", build.name, n)
			}
		}
		if got, want := strings.Count(build.ptx, ".entry "), len(Names()); got != want {
			t.Errorf("%s has %d kernels, Names lists %d", build.name, got, want)
		}
	}
	seen := map[string]bool{}
	for _, n := range Names() {
		if seen[n] {
			t.Errorf("Names lists %s twice", n)
		}
		seen[n] = true
	}
}

func TestPTXIsCurrent(t *testing.T) {
	want, err := SourceHash(os.DirFS("."))
	if err != nil {
		t.Fatal(err)
	}
	for _, build := range []struct {
		name, ptx string
		target    string
	}{{"helexa_sm80.ptx", ptxSM80, ".target sm_80"}, {"helexa_sm90.ptx", ptxSM90, ".target sm_90"}} {
		if got := PTXSourceHash(build.ptx); got != want {
			t.Errorf("%s was compiled from sources with hash %q, the sources now hash to %q: run make ptx (scripts/build-ptx.sh) and commit the PTX",
				build.name, got, want)
		}
		if !strings.Contains(build.ptx, "\n"+build.target+"\n") {
			t.Errorf("%s is not for %s", build.name, build.target)
		}
	}
}

func TestPTXChoice(t *testing.T) {
	tests := []struct {
		major, minor int
		want         string // "" for an error
	}{
		{9, 0, ptxSM90}, {10, 0, ptxSM90}, {12, 1, ptxSM90},
		{8, 0, ptxSM80}, {8, 6, ptxSM80}, {8, 9, ptxSM80},
		{7, 5, ""}, {6, 1, ""}, {0, 0, ""},
	}
	for _, tt := range tests {
		got, err := PTX(tt.major, tt.minor)
		if tt.want == "" {
			if name := fmt.Sprintf("%d.%d", tt.major, tt.minor); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("PTX(%d, %d): %v, want an error naming the capability", tt.major, tt.minor, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("PTX(%d, %d) = %d bytes, %v; want the %d-byte build", tt.major, tt.minor, len(got), err, len(tt.want))
		}
	}
	if ptxSM80 == ptxSM90 {
		t.Error("the sm_80 and sm_90 builds are the same file")
	}
}

func TestSourceHash(t *testing.T) {
	fsys := fstest.MapFS{
		"b.cu":      {Data: []byte("B")},
		"a.cuh":     {Data: []byte("A")},
		"c.go":      {Data: []byte("ignored")},
		"all.cu":    {Data: []byte("X")},
		"x.ptx":     {Data: []byte("ignored")},
		"sub/d.cu":  {Data: []byte("ignored")},
		"a.cu":      {Data: []byte("C")},
		"notes.txt": {Data: []byte("ignored")},
	}
	got, err := SourceHash(fsys)
	if err != nil {
		t.Fatal(err)
	}
	// a.cu, a.cuh, all.cu, b.cu in byte order of their names
	sum := sha256.Sum256([]byte("CAXB"))
	if want := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("SourceHash = %s, want sha256(\"CAXB\") = %s", got, want)
	}
	if _, err := SourceHash(fstest.MapFS{"a.go": {}}); err == nil {
		t.Error("SourceHash of a directory without sources succeeded")
	}
	if h := PTXSourceHash(HashPrefix + "abc\n.version 7.8\n"); h != "abc" {
		t.Errorf("PTXSourceHash = %q", h)
	}
	if h := PTXSourceHash("//\n" + HashPrefix + "abc\n"); h != "" {
		t.Errorf("PTXSourceHash of a file without the first line = %q", h)
	}
}

// TestCubins: each cubin is CUDA machine code for its GPU generation, built
// from the current sources, with every kernel.
func TestCubins(t *testing.T) {
	want, err := SourceHash(os.DirFS("."))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(cubinsHash); got != want {
		t.Errorf("the cubins were built from sources with hash %q, the sources now hash to %q: run make ptx and commit the cubins", got, want)
	}
	for _, build := range []struct {
		name string
		bin  []byte
	}{{"helexa_sm80.cubin", cubinSM80}, {"helexa_sm90.cubin", cubinSM90}} {
		// an ELF file (CUDA's own version byte, which debug/elf refuses)
		// for EM_CUDA, naming every kernel in its string table
		const emCUDA = 190
		if len(build.bin) < 64 || string(build.bin[:4]) != "\x7fELF" || binary.LittleEndian.Uint16(build.bin[18:]) != emCUDA {
			t.Fatalf("%s is not CUDA machine code", build.name)
		}
		for _, n := range Names() {
			if !bytes.Contains(build.bin, []byte("\x00"+n+"\x00")) {
				t.Errorf("%s has no kernel %s", build.name, n)
			}
		}
	}
	tests := []struct {
		major, minor int
		want         []byte
	}{
		{9, 0, cubinSM90}, {8, 0, cubinSM80}, {8, 6, cubinSM80}, {8, 9, cubinSM80},
		{9, 1, nil}, {10, 0, nil}, {12, 0, nil}, {7, 5, nil},
	}
	for _, tt := range tests {
		if got := Cubin(tt.major, tt.minor); !bytes.Equal(got, tt.want) || (tt.want == nil) != (got == nil) {
			t.Errorf("Cubin(%d, %d): %d bytes, want %d", tt.major, tt.minor, len(got), len(tt.want))
		}
	}
}
