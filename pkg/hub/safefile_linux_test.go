package hub

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDiskFullIsNotANetworkError: a write that fails with ENOSPC (here
// /dev/full) is reported as a full disk at once, not retried as a dropped
// connection.
func TestDiskFullIsNotANetworkError(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("/dev/full: %v", err)
	}
	defer f.Close()
	_, err = copyAt(f, bytes.NewReader(make([]byte, 1000)), 0, -1, func(int64) {})
	mustErrorIs(t, err, ErrDiskFull)
	checkTrue(t, !retryable(fmt.Errorf("m.gguf: %w", err)), "a full disk is not retried")
	checkTrue(t, strings.Contains(err.Error(), "free some space"), err.Error())
}
