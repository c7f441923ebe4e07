package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/pkg/api"
	"github.com/helexa/helexa/pkg/engine"
	"github.com/helexa/helexa/pkg/hub"
)

// serveOptions are the flags of `helexa serve`.
type serveOptions struct {
	Host            string        // listen address (default HELEXA_HOST)
	Insecure        bool          // allow a non-loopback bind without an API key
	Detach          bool          // start a background daemon and return
	Stop            bool          // stop the background daemon
	ShutdownTimeout time.Duration // how long in-flight requests may take after a stop signal
	PIDFile         string        // hidden: the detached daemon writes and removes its pid file
	Device          string        // where models run (default HELEXA_DEVICE)
}

func newServeCmd(s streams) *cobra.Command {
	var opts serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve models over HTTP: the OpenAI, Anthropic and ollama APIs",
		Long: `Serve models over OpenAI's API (/v1/chat/completions, /v1/completions,
/v1/embeddings, /v1/models, /v1/responses), Anthropic's Messages API
(/v1/messages, /v1/messages/count_tokens), ollama's API (/api/chat,
/api/generate, /api/tags, /api/show, /api/ps, /api/embed, /api/pull,
/api/delete, /api/version), llama-server's utility endpoints (/tokenize,
/detokenize, /apply-template, /props) and helexa's own (/api/load,
/api/unload, /health, /metrics).

Runs in the foreground by default, logging to stderr; SIGINT/SIGTERM stop
accepting connections and let in-flight requests finish (--shutdown-timeout).
--detach starts a background daemon (pid and log files under the state
directory) and waits until it answers; --stop stops it.

The default address is 127.0.0.1:13131 (HELEXA_HOST). Binding a non-loopback
address requires HELEXA_API_KEY (clients then send "Authorization: Bearer KEY"),
or --insecure.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), opts, s)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Host, "host", "", "listen address host:port (default $HELEXA_HOST or 127.0.0.1:13131)")
	f.BoolVar(&opts.Insecure, "insecure", false, "allow binding a non-loopback address without HELEXA_API_KEY")
	f.BoolVar(&opts.Detach, "detach", false, "start a background daemon, wait until it answers, print its address")
	f.BoolVar(&opts.Stop, "stop", false, "stop the background daemon started with --detach")
	f.DurationVar(&opts.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "how long in-flight requests may run after a stop signal before they are cancelled")
	addDeviceFlag(cmd, &opts.Device)
	f.StringVar(&opts.PIDFile, "pid-file", "", "write the daemon's pid file (used by --detach)")
	_ = f.MarkHidden("pid-file")
	cmd.MarkFlagsMutuallyExclusive("detach", "stop")
	return cmd
}

func runServe(ctx context.Context, opts serveOptions, s streams) error {
	if opts.Host == "" {
		opts.Host = envvars.Host.Get()
	}
	switch {
	case opts.Stop:
		return stopDaemon(ctx, opts, s)
	case opts.Detach:
		return detachDaemon(ctx, opts, s)
	}
	apiKey := envvars.APIKey.Get()
	if apiKey != "" && strings.TrimSpace(apiKey) == "" {
		return fmt.Errorf("%s is set but blank: set it to a real token, or unset it", envvars.APIKey.Name)
	}
	if err := checkBind(opts.Host, apiKey, opts.Insecure); err != nil {
		return err
	}
	catalog, err := newServeCatalog()
	if err != nil {
		return err
	}
	mgr, puller, err := newServeEngine(ctx, slog.Default(), opts.Device)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := mgr.Close(closeCtx); err != nil {
			slog.Warn("unloading models", "err", err)
		}
	}()
	maxBody, err := envvars.MaxRequestBytes.Int()
	if err != nil {
		return err
	}
	bindHost, _, _ := net.SplitHostPort(opts.Host)
	guard := api.Guard{BindHost: bindHost, AllowedHosts: api.ParseList(envvars.AllowedHosts.Get()),
		Origins: api.ParseList(envvars.Origins.Get())}
	srv, err := api.NewServer(api.Config{Service: mgr, Engine: mgr, Puller: puller, Catalog: catalog, APIKey: apiKey, Guard: guard,
		MaxBodyBytes: int64(maxBody), Remover: hubRemover{}, Version: serveVersion()})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Host)
	if err != nil {
		return listenError(opts.Host, err)
	}
	if opts.PIDFile != "" {
		if err := writePIDFile(opts.PIDFile, selfRecord(ln.Addr().String())); err != nil {
			ln.Close()
			return err
		}
		defer os.Remove(opts.PIDFile)
	}
	return serveHTTP(ctx, ln, srv.Handler(), opts.ShutdownTimeout, apiKey != "")
}

// serveHTTP serves until ctx ends, then shuts down gracefully: no new
// connections, in-flight requests get up to timeout, then are cancelled.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler, timeout time.Duration, auth bool) error {
	reqCtx, cancelReqs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelReqs()
	hs := &http.Server{
		Handler: h,
		// Slow or idle clients cannot hold connections open: headers must
		// arrive within 10s, an idle keep-alive connection closes after 2m
		// (bodies are capped in size; a read deadline on whole requests
		// would cancel long generations).
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	slog.Info("helexa serving", "addr", "http://"+ln.Addr().String(), "auth", auth)
	select {
	case err := <-errc:
		return fmt.Errorf("server stopped: %w", err)
	case <-ctx.Done():
	}
	slog.Info("shutting down: waiting for in-flight requests", "timeout", timeout)
	shCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := hs.Shutdown(shCtx); err != nil {
		slog.Warn("in-flight requests did not finish in time; cancelling them", "timeout", timeout)
		cancelReqs()
		_ = hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("server stopped: %w", err)
	}
	slog.Info("helexa stopped")
	return nil
}

// checkBind refuses a non-loopback listen address without an API key.
func checkBind(addr, apiKey string, insecure bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return &userError{fmt.Sprintf("listen address %q is not host:port (e.g. 127.0.0.1:13131)", addr), err}
	}
	if isLoopback(host) || apiKey != "" || insecure {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s without an API key: anyone on the network could use it; "+
		"set %s (clients send it as a bearer token), bind 127.0.0.1, or pass --insecure", addr, envvars.APIKey.Name)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newServeEngine builds the engine from the environment: an engine.Manager
// over the GGUF loader, resolving references through the Hugging Face
// cache and running each model in a runner process (HELEXA_RUNNER), and
// the puller behind /api/pull.
func newServeEngine(ctx context.Context, log *slog.Logger, device string) (*engine.Manager, api.Puller, error) {
	exec, err := serveExecStarter(ctx, log, device)
	if err != nil {
		return nil, nil, err
	}
	m, err := newEngineWith(log, logProgress(log), nil, exec)
	if err != nil {
		return nil, nil, err
	}
	return m, hubPuller{}, nil
}

// newServeCatalog lists the Hugging Face cache (the one the engine loads
// from) for /v1/models.
func newServeCatalog() (api.Catalog, error) {
	hc, err := newHubClient("", nil)
	if err != nil {
		return nil, err
	}
	o, err := hub.OptionsFromEnv()
	if err != nil {
		return nil, err
	}
	return hubCatalog{hc: hc, facts: &weightFacts{}, aliases: aliasesByRef(o.Aliases)}, nil
}

// hubCatalog lists the models in the Hugging Face cache for /v1/models
// and /api/tags.
type hubCatalog struct {
	hc      *hub.Client
	facts   *weightFacts
	aliases map[string][]string // reference (lower case) → its aliases
}

func (c hubCatalog) List(ctx context.Context) ([]api.CatalogModel, error) {
	cached, err := c.hc.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the model cache %s: %w", c.hc.CacheDir(), err)
	}
	out := make([]api.CatalogModel, 0, len(cached))
	for _, m := range cached {
		family, params := c.facts.of(m.Path, m.Modified)
		out = append(out, api.CatalogModel{
			ID: m.Ref, Path: m.Path, Format: m.Format, Quant: m.Quant, SizeBytes: m.Size, Modified: m.Modified,
			Family: family, Parameters: params, Aliases: c.aliases[strings.ToLower(m.Ref)],
		})
	}
	return out, nil
}

// logProgress reports downloads made while loading as log lines.
func logProgress(log *slog.Logger) hub.ProgressFunc {
	return func(e hub.Event) {
		switch e.Kind {
		case hub.EventStart, hub.EventDone, hub.EventNotice:
			log.Info("pull", "event", e.Kind, "repo", e.Repo, "file", e.File, "bytes", e.Total, "msg", e.Message)
		}
	}
}

// hubPuller serves /api/pull with a hub client per request, so each
// request receives its own progress.
type hubPuller struct{}

func (hubPuller) Pull(ctx context.Context, model string, progress func(api.PullProgress)) error {
	return hubPull(ctx, model, false, progress)
}

// PullCached implements api.CachedPuller.
func (hubPuller) PullCached(ctx context.Context, model string, progress func(api.PullProgress)) error {
	return hubPull(ctx, model, true, progress)
}

func hubPull(ctx context.Context, model string, preferCache bool, progress func(api.PullProgress)) error {
	hc, err := newHubClientWith("", func(e hub.Event) {
		progress(api.PullProgress{Status: string(e.Kind), File: e.File, Completed: e.Bytes, Total: e.Total, Message: e.Message})
	}, preferCache)
	if err != nil {
		return err
	}
	if _, err := hc.Resolve(ctx, model); err != nil {
		return pullError(model, err)
	}
	return nil
}

// pullError classifies a hub error for the API's status codes.
func pullError(model string, err error) error {
	kind := engine.KindInternal
	switch {
	case errors.Is(err, hub.ErrUnknownModel):
		kind = engine.KindNotFound
	case errors.Is(err, hub.ErrBadReference):
		kind = engine.KindBadRequest
	case errors.Is(err, hub.ErrNotFound), errors.Is(err, hub.ErrQuantNotFound), errors.Is(err, hub.ErrNotCached), errors.Is(err, hub.ErrNoWeights):
		kind = engine.KindNotFound
	case errors.Is(err, hub.ErrUnauthorized):
		kind = engine.KindBadRequest // the Hub refused: not the daemon's own 401
	}
	return &engine.Error{Kind: kind, Msg: fmt.Sprintf("pull %s", model), Err: err}
}
