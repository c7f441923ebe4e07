package chat

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/helexa/helexa/internal/jinja/exec"
)

// filterReverse is Jinja's reverse: a string reversed, or the items of a
// list (the keys of a dict) in reverse order. the engine's sorts them.
func filterReverse(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if len(va.Args) > 0 || len(va.KwArgs) > 0 {
		return errValue(errors.New("reverse() takes no arguments"))
	}
	switch {
	case in.IsString():
		r := []rune(in.String())
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return exec.AsValue(string(r))
	case in.IsList():
		out := make([]any, in.Len())
		for i := range out {
			out[len(out)-1-i] = in.Index(i).Interface()
		}
		return exec.AsValue(out)
	case in.IsDict():
		var keys []any
		iterateItems(in, func(k, _ *exec.Value) bool {
			keys = append([]any{k.Interface()}, keys...)
			return true
		})
		return exec.AsValue(keys)
	}
	return errValue(fmt.Errorf("argument to reverse() must be a sequence, not %s", typeName(in)))
}

// filterRound is Jinja's round(precision=0, method='common'): 'common' is
// Python's round (ties to even; an int stays an int), 'floor' and 'ceil'
// give floats.
func filterRound(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	a, err := takeArgs("round", va, "precision", "method")
	if err != nil {
		return errValue(err)
	}
	precision, method := 0, "common"
	if !isNone(a[0]) {
		if !a[0].IsInteger() {
			return errValue(errors.New("round: precision must be an integer"))
		}
		precision = a[0].Integer()
	}
	if !isNone(a[1]) {
		method = a[1].String()
	}
	if !in.IsNumber() {
		return errValue(fmt.Errorf("round: %s is not a number", typeName(in)))
	}
	scale := math.Pow(10, float64(precision))
	switch method {
	case "common":
		if in.IsInteger() && precision >= 0 {
			return exec.AsValue(in.Integer())
		}
		return exec.AsValue(pyRound(in.Float(), precision))
	case "floor":
		return exec.AsValue(math.Floor(in.Float()*scale) / scale)
	case "ceil":
		return exec.AsValue(math.Ceil(in.Float()*scale) / scale)
	}
	return errValue(fmt.Errorf("round: method must be 'common', 'ceil' or 'floor', not %q", method))
}

// pyRound is Python's round(x, n) for a float: the exact binary value
// rounded half to even (strconv rounds correctly).
func pyRound(x float64, n int) float64 {
	if n >= 0 {
		r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', n, 64), 64)
		if err == nil {
			return r
		}
		return x
	}
	scale := math.Pow(10, float64(-n))
	return math.RoundToEven(x/scale) * scale
}
