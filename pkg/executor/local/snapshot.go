package local

import (
	"fmt"

	"github.com/helexa/helexa/pkg/executor"
)

// checkStateRefs validates a work's snapshot fields (executor.Work.LoadState
// and SaveState) and, for a work that does not restore a snapshot, that it
// continues where its sequence's recurrent state is.
func (l *Executor) checkStateRefs(w *executor.Work) error {
	rec := l.seqs[w.Seq].rec
	if rec == nil {
		if w.LoadState != 0 || w.SaveState != 0 {
			return fmt.Errorf("state snapshots asked of a %s model, which has no recurrent state", l.model.Arch)
		}
		return nil
	}
	if w.LoadState != 0 {
		snap := l.snaps[w.LoadState]
		if snap == nil {
			return fmt.Errorf("no recurrent state snapshot %d (never saved, or dropped)", w.LoadState)
		}
		if snap.Pos != w.Pos {
			return fmt.Errorf("position %d, but state snapshot %d is at position %d", w.Pos, w.LoadState, snap.Pos)
		}
		return nil
	}
	if w.Pos != 0 && w.Pos != rec.Pos {
		return fmt.Errorf("position %d, but the sequence's recurrent state is at position %d: sequences of a %s model only move forward (no cached prefix without a state snapshot, no rewind)",
			w.Pos, rec.Pos, l.model.Arch)
	}
	return nil
}

// restoreState readies a valid work's recurrent state before the passes:
// a snapshot restored, or a state zeroed for a sequence that starts again
// at position 0.
func (l *Executor) restoreState(w *executor.Work) error {
	rec := l.seqs[w.Seq].rec
	switch {
	case rec == nil:
		return nil
	case w.LoadState != 0:
		return rec.CopyFrom(l.be, l.snaps[w.LoadState])
	case w.Pos == 0 && rec.Pos != 0:
		return rec.Reset(l.be)
	}
	return nil
}

// saveState snapshots a finished work's recurrent state under its
// SaveState key.
func (l *Executor) saveState(w *executor.Work) error {
	rec := l.seqs[w.Seq].rec
	if w.SaveState == 0 || rec == nil {
		return nil
	}
	snap := l.snaps[w.SaveState]
	if snap == nil {
		var err error
		if snap, err = l.model.NewState(l.be); err != nil {
			return err
		}
		l.snaps[w.SaveState] = snap
	}
	return snap.CopyFrom(l.be, rec)
}

// dropStates frees the snapshots a step's works name.
func (l *Executor) dropStates(batch []executor.Work) {
	for i := range batch {
		for _, key := range batch[i].DropStates {
			if snap := l.snaps[key]; snap != nil {
				snap.Free(l.be)
				delete(l.snaps, key)
			}
		}
	}
}

// snapshotBytes is the memory the snapshots take.
func (l *Executor) snapshotBytes() int64 { return int64(len(l.snaps)) * l.info.StateBytes }
