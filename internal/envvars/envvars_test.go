package envvars_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/fixtures"
)

// TestEveryVariableIsDeclared scans the module's Go files for HELEXA_*
// names: each must be declared here (and so shown by `helexa --help`).
func TestEveryVariableIsDeclared(t *testing.T) {
	declared := map[string]bool{}
	for _, v := range envvars.All() {
		declared[v.Name] = true
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	name := regexp.MustCompile(`HELEXA_[A-Z0-9_]+`)
	seen := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range name.FindAllString(string(src), -1) {
			seen++
			if !declared[n] {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s uses %s, which internal/envvars does not declare (add it to the var block and All())", rel, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("no HELEXA_ names found: the scan is broken")
	}
}

// TestHelpListsTheUsersVariables: --help shows every variable a user may
// set with its default, and none of the tests-only ones.
func TestHelpListsTheUsersVariables(t *testing.T) {
	help := envvars.Help()
	if n := len(envvars.All()); n != len(envvars.User())+len(envvars.TestsOnly()) {
		t.Errorf("All() has %d variables, User() and TestsOnly() %d and %d", n, len(envvars.User()), len(envvars.TestsOnly()))
	}
	for _, v := range envvars.TestsOnly() {
		if strings.Contains(help, v.Name) {
			t.Errorf("Help() shows the tests-only %s", v.Name)
		}
	}
	for _, v := range envvars.User() {
		if !strings.Contains(help, v.Name) {
			t.Errorf("Help() lacks %s", v.Name)
		}
		if v.Default != "" && !strings.Contains(help, `"`+v.Default+`"`) {
			t.Errorf("Help() lacks the default of %s (%q)", v.Name, v.Default)
		}
	}
}

func TestFixturesName(t *testing.T) {
	if fixtures.EnvVar != envvars.Fixtures.Name {
		t.Errorf("fixtures.EnvVar = %q, envvars.Fixtures.Name = %q", fixtures.EnvVar, envvars.Fixtures.Name)
	}
}

func TestInt(t *testing.T) {
	v := envvars.Var{Name: "HELEXA_CHUNK_SIZE", Default: "512"}
	tests := []struct {
		env     string
		want    int
		wantErr bool
	}{
		{env: "", want: 512},
		{env: " 64 ", want: 64},
		{env: "0", want: 0},
		{env: "-1", wantErr: true},
		{env: "many", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv(v.Name, tt.env)
			got, err := v.Int()
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), v.Name) {
					t.Fatalf("Int() = %d, %v; want an error naming %s", got, err, v.Name)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Int() = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
	t.Setenv("HELEXA_NUM_THREADS", "")
	if n, err := envvars.NumThreads.Int(); err != nil || n != 0 {
		t.Errorf("unset NUM_THREADS: Int() = %d, %v; want 0", n, err)
	}
}

func TestIsSet(t *testing.T) {
	t.Setenv(envvars.LogLevel.Name, "")
	if envvars.LogLevel.IsSet() {
		t.Error("empty variable reported as set")
	}
	t.Setenv(envvars.LogLevel.Name, "debug")
	if !envvars.LogLevel.IsSet() {
		t.Error("set variable reported as unset")
	}
}
