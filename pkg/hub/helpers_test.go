package hub

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Small assertion helpers (the standard library only).

func msg(extra []any) string {
	if len(extra) == 0 {
		return ""
	}
	return " (" + fmt.Sprint(extra...) + ")"
}

func mustNoError(t *testing.T, err error, extra ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v%s", err, msg(extra))
	}
}

func checkNoError(t *testing.T, err error, extra ...any) {
	t.Helper()
	if err != nil {
		t.Errorf("unexpected error: %v%s", err, msg(extra))
	}
}

func mustError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("expected an error, got nil")
	}
}

func mustErrorIs(t *testing.T, err, target error, extra ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v is not %v%s", err, target, msg(extra))
	}
}

func checkErrorIs(t *testing.T, err, target error, extra ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("error %v is not %v%s", err, target, msg(extra))
	}
}

func mustErrorAs(t *testing.T, err error, target any) {
	t.Helper()
	if !errors.As(err, target) {
		t.Fatalf("error %v is not a %T", err, target)
	}
}

func checkEqual(t *testing.T, want, got any, extra ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Errorf("want %v, got %v%s", short80(want), short80(got), msg(extra))
	}
}

func mustEqual(t *testing.T, want, got any, extra ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("want %v, got %v%s", short80(want), short80(got), msg(extra))
	}
}

func short80(v any) string {
	s := fmt.Sprintf("%#v", v)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func checkContains(t *testing.T, haystack any, needle string, extra ...any) {
	t.Helper()
	switch h := haystack.(type) {
	case string:
		if !strings.Contains(h, needle) {
			t.Errorf("%q does not contain %q%s", h, needle, msg(extra))
		}
	case []string:
		if !slices.Contains(h, needle) {
			t.Errorf("%q does not contain %q%s", h, needle, msg(extra))
		}
	default:
		t.Fatalf("checkContains: unsupported %T", haystack)
	}
}

func checkTrue(t *testing.T, ok bool, extra ...any) {
	t.Helper()
	if !ok {
		t.Errorf("expected true%s", msg(extra))
	}
}

func checkFalse(t *testing.T, ok bool, extra ...any) {
	t.Helper()
	if ok {
		t.Errorf("expected false%s", msg(extra))
	}
}

func checkFileExists(t *testing.T, p string) {
	t.Helper()
	if fi, err := os.Stat(p); err != nil || fi.IsDir() {
		t.Errorf("file %s should exist", p)
	}
}

func checkNoFileExists(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Lstat(p); err == nil {
		t.Errorf("%s should not exist", p)
	}
}

func checkNoDirExists(t *testing.T, p string) { t.Helper(); checkNoFileExists(t, p) }
