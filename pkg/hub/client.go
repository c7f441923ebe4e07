// Package hub owns everything between a model reference and files on disk:
// parsing references (org/repo[:QUANT][@REVISION], hf.co/ URLs, aliases,
// local paths), the Hugging Face Hub HTTP protocol as huggingface_hub speaks
// it, GGUF quant selection, resumable verified downloads, and the standard
// Hugging Face cache layout (models--org--name/{blobs,snapshots,refs}) shared
// with Python tools. run, serve and pull all resolve references through it.
package hub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/helexa/helexa/internal/envvars"
	"github.com/helexa/helexa/internal/fsutil"
)

// Options configure a Client. Zero values take the documented defaults.
type Options struct {
	CacheDir string // cache root; default: see CacheRoot
	Endpoint string // Hub base URL; default https://huggingface.co
	Token    string // bearer token; default none
	Offline  bool   // never touch the network
	// PreferCache answers a reference whose snapshot is complete in the
	// cache from the cache at once, without asking the Hub (what loading a
	// model wants; `helexa pull` asks the Hub for updates).
	PreferCache bool
	// HTTPClient is used for every request (default: a client with sane
	// timeouts). Its CheckRedirect is respected for the redirects it follows.
	HTTPClient *http.Client
	// Aliases map short names (matched case-insensitively) to references;
	// nil means BuiltinAliases().
	Aliases map[string]string
	// Progress receives download events; calls are serialized. May be nil.
	Progress ProgressFunc

	// Connections is the number of parallel ranges for one large file
	// (default 8); ParallelThreshold the size from which a file is split
	// (default 64 MiB).
	Connections       int
	ParallelThreshold int64
	// MaxRetries for 429/5xx and dropped connections (default 5), with
	// exponential backoff from RetryBase (default 500ms) capped at 10s.
	MaxRetries int
	RetryBase  time.Duration
	// ReadTimeout is how long a download may receive nothing before it
	// counts as stalled and is retried from where it stopped (default 10s,
	// as huggingface_hub's).
	ReadTimeout time.Duration
}

// OptionsFromEnv builds Options from HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME,
// HF_ENDPOINT, HF_TOKEN (or $HF_HOME/token), HF_HUB_OFFLINE and the helexa
// config file (HELEXA_CONFIG or $XDG_CONFIG_HOME/helexa/config.json:
// "hub_cache" and "aliases").
func OptionsFromEnv() (Options, error) {
	cfgPath, required := ConfigPath()
	cfg, err := LoadConfig(cfgPath, required)
	if err != nil {
		return Options{}, err
	}
	root, err := CacheRoot(cfg.HubCache)
	if err != nil {
		return Options{}, err
	}
	aliases := BuiltinAliases()
	for k, v := range cfg.Aliases {
		aliases[strings.ToLower(k)] = v
	}
	return Options{
		CacheDir: root,
		Endpoint: strings.TrimRight(envvars.HFEndpoint.Get(), "/"),
		Token:    tokenFromEnv(),
		Offline:  Truthy(envvars.HFOffline.Get()),
		Aliases:  aliases,
	}, nil
}

// ConfigPath returns the config file path and whether it was given
// explicitly (HELEXA_CONFIG), in which case it must exist.
func ConfigPath() (string, bool) {
	if p := envvars.Config.Get(); p != "" {
		return p, true
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "helexa", "config.json"), false
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".config", "helexa", "config.json"), false
	}
	return "", false
}

// CacheRoot applies the precedence explicit > HF_HUB_CACHE > HF_HOME/hub >
// XDG_CACHE_HOME/huggingface/hub > ~/.cache/huggingface/hub.
func CacheRoot(explicit string) (string, error) {
	if explicit != "" {
		return fsutil.ExpandHome(explicit)
	}
	if v := envvars.HFHubCache.Get(); v != "" {
		return fsutil.ExpandHome(v)
	}
	home, err := hfHome()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "hub"), nil
}

// hfHome is HF_HOME, else XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface.
func hfHome() (string, error) {
	if v := envvars.HFHome.Get(); v != "" {
		return fsutil.ExpandHome(v)
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "huggingface"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot locate the Hugging Face cache: set HF_HUB_CACHE or HF_HOME (%w)", err)
	}
	return filepath.Join(home, ".cache", "huggingface"), nil
}

func tokenFromEnv() string {
	if t := strings.TrimSpace(envvars.HFToken.Get()); t != "" {
		return t
	}
	home, err := hfHome()
	if err != nil {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(home, "token"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// Truthy reads a boolean environment value the way huggingface_hub does:
// 1, true, yes and on (any case) are true; anything else is false.
func Truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Client resolves references and manages the cache. Safe for concurrent use.
type Client struct {
	opts    Options
	http    *http.Client
	emitMu  sync.Mutex
	symlink func(oldname, newname string) error // os.Symlink; tests simulate a file system without links
}

// DefaultReadTimeout is Options.ReadTimeout's default.
const DefaultReadTimeout = 10 * time.Second

// New returns a Client; zero Options fields take their defaults.
func New(opts Options) *Client {
	opts.Endpoint = strings.TrimRight(cmp.Or(opts.Endpoint, envvars.HFEndpoint.Default), "/")
	opts.Connections = cmp.Or(opts.Connections, 8)
	opts.ParallelThreshold = cmp.Or(opts.ParallelThreshold, 64<<20)
	opts.MaxRetries = cmp.Or(opts.MaxRetries, 5)
	opts.RetryBase = cmp.Or(opts.RetryBase, 500*time.Millisecond)
	opts.ReadTimeout = cmp.Or(opts.ReadTimeout, DefaultReadTimeout)
	if opts.Aliases == nil {
		opts.Aliases = BuiltinAliases()
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			ResponseHeaderTimeout: 60 * time.Second,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   20 * time.Second,
			MaxIdleConnsPerHost:   16,
		}}
	}
	return &Client{opts: opts, http: hc, symlink: os.Symlink}
}

// CacheDir is the cache root the client uses.
func (c *Client) CacheDir() string { return c.opts.CacheDir }

// ParseRef parses a reference with the client's alias table.
func (c *Client) ParseRef(ref string) (Ref, error) { return ParseRef(ref, c.opts.Aliases) }

// Resolved is a reference resolved to files on disk.
type Resolved struct {
	Ref       string   // canonical reference (org/repo:QUANT[@REV]) or the local path
	Repo      string   // org/name; empty when Local
	Revision  string   // as asked (default main)
	Commit    string   // the snapshot's commit
	Quant     string   // GGUF quant label; empty for safetensors
	Format    string   // FormatGGUF or FormatSafetensors
	Files     []string // repo-relative paths in the snapshot
	ModelPath string   // the .gguf (first shard) or the model directory
	Local     bool     // a local file or directory, not from the Hub
	Note      string   // why a quant was chosen automatically, if it was
}

// Resolve turns a reference into files on disk, downloading whatever the
// cache lacks (or, offline, failing with ErrNotCached naming what is missing).
func (c *Client) Resolve(ctx context.Context, ref string) (*Resolved, error) {
	r, err := c.ParseRef(ref)
	if err != nil {
		return nil, err
	}
	if r.Local() {
		return resolveLocal(r)
	}
	if c.opts.CacheDir == "" {
		return nil, errors.New("hub: no cache directory configured (Options.CacheDir)")
	}
	res, err := c.resolveRemote(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := c.checkInCache(res.ModelPath); err != nil {
		return nil, err
	}
	return res, nil
}

// resolveRemote resolves a Hub reference online or, offline or when the
// Hub fails, from the cache.
func (c *Client) resolveRemote(ctx context.Context, r Ref) (*Resolved, error) {
	if c.opts.Offline {
		return c.resolveCached(r, "HF_HUB_OFFLINE=1 keeps helexa off the network")
	}
	if c.opts.PreferCache {
		if cached, err := c.resolveCached(r, "cached"); err == nil {
			return cached, nil
		}
	}
	res, err := c.resolveOnline(ctx, r)
	if err != nil && ctx.Err() == nil && cacheFallback(err) {
		if cached, cerr := c.resolveCached(r, "the Hub did not answer"); cerr == nil {
			why := err.Error()
			var ue *UnreachableError
			if errors.As(err, &ue) {
				why = ue.Short()
			}
			c.emit(Event{Kind: EventNotice, Repo: r.Repo, Message: fmt.Sprintf("%s; using the cached snapshot %s", why, short(cached.Commit))})
			return cached, nil
		}
	}
	return res, err
}

// cacheFallback says whether a failed online resolve may be answered from
// the cache, as huggingface_hub does: the Hub is unreachable, down (5xx),
// rate-limiting (429) or refusing a token (401/403) for files already here.
// A 404 (the repo, revision or file is gone) is not papered over.
func cacheFallback(err error) bool {
	var netErr *UnreachableError
	if errors.As(err, &netErr) {
		return true
	}
	var he *HTTPError
	return errors.As(err, &he) && (he.retryable() || errors.Is(he, ErrUnauthorized))
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
