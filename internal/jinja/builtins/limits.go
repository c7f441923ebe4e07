package builtins

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/helexa/helexa/internal/jinja/errs"
	"github.com/helexa/helexa/internal/jinja/exec"
)

// checkBuilt refuses to build a string of n bytes (n < 0: overflowed)
// larger than the engine's bound or the render's output budget.
func checkBuilt(e *exec.Evaluator, n int) error {
	if err := errs.CheckStringSize(n); err != nil {
		return err
	}
	if e != nil {
		return e.Budget.CheckSize(n)
	}
	return nil
}

// replacedSize is len(strings.Replace(s, old, repl, n)), computed without
// building it (-1 on overflow).
func replacedSize(s, old, repl string, n int) int {
	var k int
	if old == "" {
		k = utf8.RuneCountInString(s) + 1
	} else {
		k = strings.Count(s, old)
	}
	if n >= 0 && n < k {
		k = n
	}
	grow := len(repl) - len(old)
	if grow > 0 && k > (math.MaxInt-len(s))/grow {
		return -1
	}
	return len(s) + k*grow
}
