package prof

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestStartWritesAProfile(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "cpu")
	stop, err := Start(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(fmt.Sprintf("%s.%d", prefix, os.Getpid()))
	if err != nil || st.Size() == 0 {
		t.Fatalf("profile %v (size %v)", err, st)
	}
}

func TestStartWithoutAPathDoesNothing(t *testing.T) {
	stop, err := Start("")
	if err != nil || stop() != nil {
		t.Fatalf("Start(\"\"): %v", err)
	}
}

func TestStartReportsAnUnwritablePath(t *testing.T) {
	if _, err := Start(filepath.Join(t.TempDir(), "missing", "cpu")); err == nil {
		t.Fatal("no error for a path in a missing directory")
	}
}
