# helexa build, test and lint entry points. CI runs .ci/run, which runs `make test`.
GO ?= go
STATICCHECK_VERSION ?= v0.6.1
BIN := bin/helexa
FUZZTIME ?= 5s

.PHONY: build test test-all test-race lint fuzz bench clean node-deps agent-deps fuzz-untrusted cuda ptx test-gpu gpu-bundle

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)

build:
	$(GO) build -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o $(BIN) ./cmd/helexa

# The README's test command (about 6½ minutes on 2 cores with a cold Go
# cache): every package's tests, the end-to-end ones through the real binary
# and the real Node clients included. Fixtures come from ../shared/fixtures
# (or $$HELEXA_FIXTURES).
test: build node-deps
	$(GO) test -timeout 30m ./...

# Everything CI runs (.ci/run runs make test first): go vet, every test
# with HELEXA_TEST_ALL=1 (the exhaustive matrices: every fixture on the
# emulated GPU, both quants of every synthetic shape, the coding agents;
# the packages that do not read it come from make test's cache), the race
# detector over the engine and the API, and short fuzzing of what a model
# file brings.
test-all: build node-deps agent-deps
	$(GO) vet ./...
	HELEXA_TEST_ALL=1 $(GO) test -timeout 30m ./...
	$(GO) test -race -timeout 30m ./pkg/engine/... ./pkg/api/...
	$(MAKE) fuzz-untrusted FUZZTIME=10s

# Fuzzes what a model file brings (the chat template engine, tokenizer.json
# and its regexes, the GGUF and safetensors headers) for FUZZTIME each; CI
# runs it at 10 s a target through make test-all.
fuzz-untrusted:
	$(GO) test -run '^$$' -fuzz '^FuzzCompileRender$$' -fuzztime $(FUZZTIME) ./pkg/models/chat
	$(GO) test -run '^$$' -fuzz '^FuzzFromHF$$' -fuzztime $(FUZZTIME) ./pkg/models/tokenizer
	$(GO) test -run '^$$' -fuzz '^FuzzLinearRegex$$' -fuzztime $(FUZZTIME) ./pkg/models/tokenizer
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./pkg/models/gguf
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./pkg/models/safetensors

# The real Node clients (OpenAI, Anthropic and ollama SDKs) for the
# end-to-end tests (testdata/node, pinned by its package-lock.json; needs
# Node.js and the npm registry).
node-deps:
	cd testdata/node && npm ci --no-audit --no-fund --loglevel=error

# The real coding agents (Claude Code and Codex CLI, about 800 MB of native
# binaries) for cmd/helexa's agents end-to-end test (testdata/agents,
# pinned by its package-lock.json). Only make test-all installs them; make
# test skips that test without them.
agent-deps:
	cd testdata/agents && npm ci --no-audit --no-fund --loglevel=error

test-race:
	$(GO) test -race -timeout 30m ./pkg/engine/... ./pkg/api/...

lint:
	@test -z "$$(gofmt -l .)" || (gofmt -l .; echo "gofmt needed"; exit 1)
	$(GO) vet ./...
	GOFLAGS= $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	scripts/check-c-portable.sh

# Runs every fuzz target for FUZZTIME each (their seed corpora already run in `make test`).
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./pkg/...

# The GPU runner, bin/helexa-cuda (build tag cuda; the only binary that
# links CUDA). Builds on any machine: Debian's CUDA 11.8 headers and stub
# libcuda are unpacked under CUDA_DIR (no root; scripts/cuda-toolchain.sh).
CUDA_DIR ?= $(CURDIR)/.cache/cuda
CUDA_ENV = CGO_CFLAGS="-I$(CUDA_DIR)/root/usr/include" CGO_LDFLAGS="-L$(CUDA_DIR)/root/usr/lib/x86_64-linux-gnu/stubs"

cuda:
	scripts/cuda-toolchain.sh headers $(CUDA_DIR)
	$(CUDA_ENV) $(GO) vet -tags cuda ./pkg/compute/cuda/... ./cmd/helexa-cuda
	$(CUDA_ENV) $(GO) build -tags cuda -o bin/helexa-cuda ./cmd/helexa-cuda

# Regenerates the committed PTX of pkg/compute/cuda/kernels from the .cu sources
# (nvcc from Debian's nvidia-cuda-toolkit, unpacked under CUDA_DIR).
ptx:
	scripts/cuda-toolchain.sh nvcc $(CUDA_DIR)
	NVCC=$(CUDA_DIR)/root/usr/lib/nvidia-cuda-toolkit/bin/nvcc scripts/build-ptx.sh

# On a machine with an NVIDIA GPU: every fixture model through helexa-cuda
# against the llama.cpp references, the poison-and-recover test, and
# helexa bench on the synthetic Qwen3-0.6B and Llama-3.2-1B shapes
# (scripts/test-gpu.sh; it reuses bin/ binaries built elsewhere).
test-gpu:
	scripts/test-gpu.sh

# Packs binaries, test binaries and a fixture subset into
# .cache/gpu/bundle.tar.xz for a GPU machine without Go or network access
# (scripts/gpu-bundle.sh says how to use it).
gpu-bundle:
	scripts/gpu-bundle.sh

clean:
	rm -rf bin
