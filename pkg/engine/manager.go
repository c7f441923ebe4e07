package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/helexa/helexa/internal/fsutil"
	"github.com/helexa/helexa/pkg/executor"
)

// Manager is the in-process engine: the registry of loaded models, each
// with its scheduler. It implements Service.
type Manager struct {
	cfg      Config
	loader   Loader
	log      *slog.Logger
	counters *counters

	mu     sync.Mutex
	models map[string]*entry
	closed bool
}

var _ Service = (*Manager)(nil)

// entry is one model in the registry.
type entry struct {
	name      string
	state     string        // StateLoading, StateReady or StatePoisoned
	loaded    chan struct{} // closed when loading ends
	loadErr   error
	model     *Model
	sched     *scheduler
	cancel    context.CancelFunc
	numCtx    int // the context size asked for at load
	tp        int // tensor-parallel ranks
	active    int // requests holding the model (queued or running)
	keepAlive time.Duration
	expires   time.Time // zero = never (or in use)
	timer     *time.Timer
	timerGen  int
	lastUse   time.Time
	poison    error
}

// NewManager returns a Manager that loads models through loader. Fields of
// cfg left zero take their defaults (KeepAlive 0 means "unload at once":
// start from DefaultConfig or ConfigFromEnv).
func NewManager(cfg Config, loader Loader, log *slog.Logger) *Manager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{
		cfg:      cfg.withDefaults(),
		loader:   loader,
		log:      log,
		counters: newCounters(),
		models:   make(map[string]*entry),
	}
}

// Close unloads every model, failing requests still in flight.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	var all []*entry
	for name, e := range m.models {
		if e.state != StateLoading {
			delete(m.models, name)
			all = append(all, e)
		}
	}
	m.mu.Unlock()
	var errs []error
	for _, e := range all {
		errs = append(errs, m.unloadEntry(ctx, e))
	}
	return errors.Join(errs...)
}

// acquire returns the model ready for a request (loading it if needed) and
// counts the request as active on it; release must follow.
func (m *Manager) acquire(ctx context.Context, name string, want loadWant) (*entry, time.Duration, error) {
	numCtx := want.numCtx
	name = CanonicalName(name)
	if name == "" {
		return nil, 0, Errorf(KindBadRequest, "no model given; name a model reference or a .gguf path")
	}
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, 0, Errorf(KindBusy, "the engine is shutting down")
		}
		e := m.models[name]
		if e == nil {
			return m.loadLocked(ctx, name, want) // unlocks
		}
		switch {
		case e.state == StateLoading:
			ch := e.loaded
			m.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, 0, ctx.Err()
			}
			if e.loadErr != nil && (!isContextErr(e.loadErr) || ctx.Err() != nil) {
				return nil, 0, e.loadErr
			}
			continue
		case e.state == StatePoisoned:
			// Automatic recovery: drop the poisoned model (closing it
			// stops its runner process) and load it afresh, split as
			// it was unless the request says otherwise.
			if want.tp == 0 {
				want.tp = e.tp
			}
			m.removeLocked(e)
			m.mu.Unlock()
			m.log.Info("reloading a poisoned model", "model", name, "cause", e.poison)
			_ = m.unloadEntry(context.WithoutCancel(ctx), e)
			continue
		case numCtx > 0 && !e.satisfies(numCtx) && e.active == 0:
			// Asked for a larger context than the model has, and nobody
			// is using it: reload. A smaller context never reloads (it
			// would shrink the model for every other client), and a busy
			// model serves with the context it has (Usage.Context says
			// which).
			m.removeLocked(e)
			m.mu.Unlock()
			if err := m.unloadEntry(ctx, e); err != nil {
				return nil, 0, err
			}
			continue
		case want.tp > 0 && want.tp != e.tp && e.active == 0:
			// Asked for another split and nobody is using it: reload.
			m.removeLocked(e)
			m.mu.Unlock()
			if err := m.unloadEntry(ctx, e); err != nil {
				return nil, 0, err
			}
			continue
		case want.tp > 0 && want.tp != e.tp:
			m.mu.Unlock()
			return nil, 0, Errorf(KindBusy, "model %q is loaded over %d tensor-parallel rank(s) and %d request(s) are using it; it is not re-split under them: retry when it is idle, or ask without tp",
				name, e.tp, e.active)
		case e.active >= m.cfg.NumParallel+m.cfg.MaxQueue:
			m.mu.Unlock()
			return nil, 0, Errorf(KindBusy, "model %q is busy: %d requests running or queued (at most %d running, HELEXA_NUM_PARALLEL, and %d queued, HELEXA_MAX_QUEUE); retry later",
				name, e.active, m.cfg.NumParallel, m.cfg.MaxQueue)
		}
		e.active++
		m.stopTimerLocked(e)
		m.mu.Unlock()
		return e, 0, nil
	}
}

// loadWant is what a request asks of the model it uses: a context size and
// a tensor-parallel split (0: whatever is loaded, or the defaults).
type loadWant struct{ numCtx, tp int }

// CanonicalName gives a local model one name wherever it is used: a path
// to an existing file or directory becomes absolute with its symbolic
// links resolved (the same file through a link is the same model); a Hub
// reference is returned as it is.
func CanonicalName(name string) string {
	if !strings.HasPrefix(name, "/") && !strings.HasPrefix(name, ".") && !strings.HasSuffix(strings.ToLower(name), ".gguf") {
		return name
	}
	return fsutil.AbsIfExists(name)
}

// satisfies reports whether the loaded model serves a request for a
// context of numCtx tokens: it was loaded asking for at least that much,
// or has that much (the training context caps what is asked).
func (e *entry) satisfies(numCtx int) bool {
	return numCtx <= e.numCtx || (e.sched != nil && numCtx <= e.sched.info.NCtx)
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// loadLocked registers name as loading and loads it (resolving the name
// before making room, so a bogus name never evicts a loaded model). It is
// called with m.mu held and releases it.
func (m *Manager) loadLocked(ctx context.Context, name string, want loadWant) (*entry, time.Duration, error) {
	numCtx, tp := want.numCtx, want.tp
	if numCtx <= 0 {
		numCtx = m.cfg.NumCtx
	}
	if tp <= 0 {
		tp = m.cfg.TP
	}
	if len(m.models) >= m.cfg.MaxLoadedModels && m.idleLRULocked() == nil {
		m.mu.Unlock()
		return nil, 0, m.fullError(name)
	}
	e := &entry{name: name, state: StateLoading, loaded: make(chan struct{}), numCtx: numCtx, tp: tp, active: 1, keepAlive: m.cfg.KeepAlive}
	m.models[name] = e
	m.mu.Unlock()

	opts := LoadOptions{NumCtx: numCtx, NumParallel: m.cfg.NumParallel, TP: tp}
	start := time.Now()
	model, err := m.loadModel(ctx, name, opts)
	dur := time.Since(start)
	m.mu.Lock()
	defer m.mu.Unlock()
	defer close(e.loaded)
	if err != nil {
		e.loadErr = loadError(name, err)
		m.removeLocked(e)
		m.log.Warn("model load failed", "model", name, "err", err)
		return nil, dur, e.loadErr
	}
	e.model = model
	sctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	e.sched = newScheduler(sctx, name, model, m.cfg, m.log, m.counters, func(err error) { m.markPoisoned(e, err) })
	go e.sched.run()
	e.state = StateReady
	info := e.sched.info
	m.log.Info("model loaded", "model", name, "processor", info.Processor, "ctx", info.NCtx,
		"kv_blocks", info.NumBlocks, "block_size", info.BlockSize, "load_ms", dur.Milliseconds())
	return e, dur, nil
}

func (m *Manager) fullError(name string) error {
	return Errorf(KindBusy, "cannot load %q: %d models are loaded and all are busy (HELEXA_MAX_LOADED_MODELS=%d); retry later",
		name, m.cfg.MaxLoadedModels, m.cfg.MaxLoadedModels)
}

// NameResolver is optionally implemented by a Loader: Resolve checks that
// a name names a model (pulling it if needed) before the Manager evicts
// anything to make room for it.
type NameResolver interface {
	Resolve(ctx context.Context, name string) error
}

// makeRoom evicts idle models (least recently used first) until the
// registry, which already holds the loading model, is within
// MaxLoadedModels.
func (m *Manager) makeRoom(ctx context.Context, name string) error {
	var victims []*entry
	m.mu.Lock()
	for len(m.models) > m.cfg.MaxLoadedModels {
		v := m.idleLRULocked()
		if v == nil {
			m.mu.Unlock()
			return m.fullError(name)
		}
		m.removeLocked(v)
		victims = append(victims, v)
	}
	m.mu.Unlock()
	for _, v := range victims {
		m.log.Info("evicting model to make room", "model", v.name, "for", name)
		_ = m.unloadEntry(context.WithoutCancel(ctx), v)
	}
	return nil
}

// loadModel resolves the name, makes room and loads the model. A panic in
// the loader (a corrupt file tripping a bug) becomes an error: the entry
// must leave the loading state, or every later request for the model would
// wait forever.
func (m *Manager) loadModel(ctx context.Context, name string, opts LoadOptions) (model *Model, err error) {
	defer func() {
		if p := recover(); p != nil {
			m.log.Error("panic while loading a model", "model", name, "panic", p, "stack", string(debug.Stack()))
			model, err = nil, Errorf(KindInternal, "loading model %q failed: panic: %v", name, p)
		}
	}()
	if r, ok := m.loader.(NameResolver); ok {
		if err := r.Resolve(ctx, name); err != nil {
			return nil, err
		}
	}
	if err := m.makeRoom(ctx, name); err != nil {
		return nil, err
	}
	m.evictForMemory(ctx, name, opts)
	return m.loader.Load(ctx, name, opts)
}

func loadError(name string, err error) error {
	var re *Error
	if errors.As(err, &re) || isContextErr(err) {
		return err
	}
	if errors.Is(err, executor.ErrNoMemory) {
		return &Error{Kind: KindNoMemory, Msg: fmt.Sprintf("model %q does not fit", name), Err: err}
	}
	return &Error{Kind: KindInternal, Msg: fmt.Sprintf("loading model %q failed", name), Err: err}
}

// evictForMemory unloads idle models (least recently used first) while the
// new model's estimated size exceeds free memory.
func (m *Manager) evictForMemory(ctx context.Context, name string, opts LoadOptions) {
	est, ok := m.loader.(SizeEstimator)
	if !ok {
		return
	}
	need, err := est.EstimateBytes(ctx, name, opts)
	if err != nil || need <= 0 {
		return
	}
	for {
		free, known := m.freeMemory(ctx)
		if !known || free >= need {
			return
		}
		m.mu.Lock()
		v := m.idleLRULocked()
		if v != nil {
			m.removeLocked(v)
		}
		m.mu.Unlock()
		if v == nil {
			m.log.Warn("model may not fit in free memory; loading anyway", "model", name,
				"need_mib", need>>20, "free_mib", free>>20)
			return
		}
		m.log.Info("evicting idle model to free memory", "model", v.name, "for", name,
			"need_mib", need>>20, "free_mib", free>>20)
		_ = m.unloadEntry(context.WithoutCancel(ctx), v)
	}
}

// freeMemory reports memory free for new models, when known: Config's
// FreeMemory, or a fresh reading from a loaded model's executor (taken
// again after each eviction, so it sees the memory the evicted model gave
// back). An executor reporting 0 does not know.
func (m *Manager) freeMemory(ctx context.Context) (int64, bool) {
	if m.cfg.FreeMemory != nil {
		return m.cfg.FreeMemory(), true
	}
	m.mu.Lock()
	var sched *scheduler
	for _, e := range m.models {
		if e.sched != nil && e.state == StateReady {
			sched = e.sched
			break
		}
	}
	m.mu.Unlock()
	if sched == nil {
		return 0, false
	}
	ctx, cancel := context.WithTimeout(ctx, memoryQueryTimeout)
	defer cancel()
	free := sched.memory(ctx).FreeBytes
	return free, free > 0
}

// memoryQueryTimeout bounds the wait for a busy model's loop to read its
// executor's memory; past it the last reading is used.
const memoryQueryTimeout = 2 * time.Second

// idleLRULocked picks the least recently used model nobody is using.
func (m *Manager) idleLRULocked() *entry {
	var v *entry
	for _, e := range m.models {
		if e.state == StateLoading || e.active > 0 {
			continue
		}
		if v == nil || e.lastUse.Before(v.lastUse) {
			v = e
		}
	}
	return v
}

func (m *Manager) markPoisoned(e *entry, err error) {
	m.mu.Lock()
	e.state = StatePoisoned
	e.poison = err
	m.mu.Unlock()
	m.log.Error("model poisoned; the next request for it loads it again", "model", e.name, "err", err)
}

// release ends a request's hold on the model and applies its keep-alive.
func (m *Manager) release(e *entry, keepAlive *time.Duration) {
	m.mu.Lock()
	e.active--
	e.lastUse = time.Now()
	e.keepAlive = m.cfg.KeepAlive
	if keepAlive != nil {
		e.keepAlive = *keepAlive
	}
	if e.active > 0 || m.models[e.name] != e {
		m.mu.Unlock()
		return
	}
	if e.keepAlive == 0 {
		m.removeLocked(e)
		m.mu.Unlock()
		m.unloadIdle(e)
		return
	}
	m.armTimerLocked(e)
	m.mu.Unlock()
}

func (m *Manager) armTimerLocked(e *entry) {
	m.stopTimerLocked(e)
	if e.keepAlive < 0 {
		return
	}
	e.expires = time.Now().Add(e.keepAlive)
	gen := e.timerGen
	e.timer = time.AfterFunc(e.keepAlive, func() { m.expire(e, gen) })
}

func (m *Manager) stopTimerLocked(e *entry) {
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	e.timerGen++
	e.expires = time.Time{}
}

// expire unloads a model whose keep-alive ran out while idle.
func (m *Manager) expire(e *entry, gen int) {
	m.mu.Lock()
	if m.models[e.name] != e || e.active > 0 || e.timerGen != gen {
		m.mu.Unlock()
		return
	}
	m.removeLocked(e)
	m.mu.Unlock()
	m.log.Info("keep-alive expired; unloading model", "model", e.name)
	m.unloadIdle(e)
}

func (m *Manager) removeLocked(e *entry) {
	if m.models[e.name] == e {
		delete(m.models, e.name)
	}
	m.stopTimerLocked(e)
}

// unloadEntry stops the model's scheduler (failing its requests) and closes
// the model. e must already be out of the registry.
// idleUnloadTimeout bounds how long an idle unload waits for a running step
// before leaving the release to the scheduler's exit.
const idleUnloadTimeout = 30 * time.Second

// unloadIdle unloads a model nobody waits for (keep-alive ran out or was 0).
func (m *Manager) unloadIdle(e *entry) {
	ctx, cancel := context.WithTimeout(context.Background(), idleUnloadTimeout)
	defer cancel()
	if err := m.unloadEntry(ctx, e); err != nil {
		m.log.Warn("idle unload incomplete", "model", e.name, "err", err)
	}
}

func (m *Manager) unloadEntry(ctx context.Context, e *entry) error {
	if e.sched == nil {
		return nil
	}
	e.cancel()
	closeModel := func() error {
		err := e.model.close()
		if err != nil {
			m.log.Warn("closing model failed", "model", e.name, "err", err)
		}
		m.log.Info("model unloaded", "model", e.name)
		return err
	}
	select {
	case <-e.sched.done:
		return closeModel()
	case <-ctx.Done():
		go func() {
			<-e.sched.done
			_ = closeModel()
		}()
		return Errorf(KindInternal, "unloading %q: a step is still running; the model is released when it returns", e.name)
	}
}

// Load loads a model without generating and applies the keep-alive.
func (m *Manager) Load(ctx context.Context, req LoadRequest) (ModelStatus, error) {
	e, _, err := m.acquire(ctx, req.Model, loadWant{numCtx: req.NumCtx, tp: req.TP})
	if err != nil {
		return ModelStatus{}, err
	}
	m.release(e, req.KeepAlive)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.statusLocked(e), nil
}

// Unload unloads a model; a model that is not loaded is a KindNotFound
// error.
func (m *Manager) Unload(ctx context.Context, model string) error {
	model = CanonicalName(model)
	m.mu.Lock()
	e := m.models[model]
	if e == nil || e.state == StateLoading {
		m.mu.Unlock()
		if e != nil {
			return Errorf(KindBusy, "model %q is still loading; unload it when the load finishes", model)
		}
		return Errorf(KindNotFound, "model %q is not loaded; GET /api/ps (helexa ps) lists the loaded models", model)
	}
	m.removeLocked(e)
	m.mu.Unlock()
	return m.unloadEntry(ctx, e)
}

// PS lists the loaded models by name.
func (m *Manager) PS(ctx context.Context) ([]ModelStatus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ModelStatus, 0, len(m.models))
	for _, e := range m.models {
		out = append(out, m.statusLocked(e))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Show describes a model, loading it if needed.
func (m *Manager) Show(ctx context.Context, model string) (ModelDetails, error) {
	e, _, err := m.acquire(ctx, model, loadWant{})
	if err != nil {
		return ModelDetails{}, err
	}
	d := e.model.Details
	d.Context = e.sched.info.NCtx
	m.release(e, nil)
	return d, nil
}

func (m *Manager) statusLocked(e *entry) ModelStatus {
	st := ModelStatus{Name: e.name, State: e.state, Active: e.active, ExpiresAt: e.expires}
	if e.poison != nil {
		st.Error = e.poison.Error()
	}
	if e.sched == nil {
		return st
	}
	info := e.sched.info
	st.Path = e.model.Details.Path
	st.Processor = info.Processor
	st.RunnerPID = runnerPID(e.model.Executor)
	st.Ranks = info.Ranks
	st.Context = info.NCtx
	mem := e.sched.gauges().mem
	st.SizeBytes = mem.WeightsBytes + mem.KVBytes
	if st.SizeBytes == 0 {
		st.SizeBytes = info.WeightsBytes + int64(info.NumBlocks)*info.BlockBytes + int64(info.WinNumBlocks)*info.WinBlockBytes
	}
	return st
}
