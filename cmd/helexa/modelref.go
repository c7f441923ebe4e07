package main

import (
	"github.com/helexa/helexa/internal/fsutil"
	"github.com/helexa/helexa/pkg/hub"
)

// localModelArg turns the model argument of run and bench into what the
// engine and a daemon (with another working directory) load: an existing
// path made absolute, and DIR:QUANT — a quant picked among a local
// directory's GGUF files — the absolute path of that quant's file. Any
// other reference is returned as typed.
func localModelArg(model string) (string, error) {
	r, err := hub.ParseRef(model, nil)
	if err != nil || !r.Local() || r.Quant == "" {
		return fsutil.AbsIfExists(model), nil
	}
	res, err := hub.ResolveLocal(r)
	if err != nil {
		return "", modelError("loading", model, err)
	}
	return res.ModelPath, nil
}
