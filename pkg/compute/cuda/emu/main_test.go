package emu

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if !cgoEnabled {
		fmt.Println("emu: skipping the kernel tests: the emulator needs cgo")
		os.Exit(0)
	}
	os.Exit(m.Run())
}
