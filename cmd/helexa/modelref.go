package main

import (
	"errors"
	"io/fs"
	"os"

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
	if err != nil || !r.Local() {
		return fsutil.AbsIfExists(model), nil
	}
	if r.Quant == "" {
		if _, err := os.Stat(r.Path); errors.Is(err, fs.ErrNotExist) {
			// Said here, not by a daemon that would look in its own directory.
			return "", &userError{(&hub.MissingPathError{Path: model}).Error(), err}
		}
		return fsutil.AbsIfExists(model), nil
	}
	res, err := hub.ResolveLocal(r)
	if err != nil {
		return "", modelError("loading", model, err)
	}
	return res.ModelPath, nil
}
