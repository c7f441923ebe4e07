# helexa build, test and lint entry points. CI runs .ci/run, which runs `make test`.
GO ?= go
STATICCHECK_VERSION ?= v0.6.1
BIN := bin/helexa
FUZZTIME ?= 5s

.PHONY: build test test-race lint fuzz bench clean node-deps

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)

build:
	$(GO) build -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o $(BIN) ./cmd/helexa

# The README's test command. Fixtures come from ../shared/fixtures (or $$HELEXA_FIXTURES).
test: build node-deps
	$(GO) vet ./...
	$(GO) test -timeout 30m ./...
	$(GO) test -race -timeout 30m ./pkg/runner/... ./pkg/api/...

# The OpenAI Node SDK for the Node end-to-end test (testdata/node, pinned by
# its package-lock.json; needs Node.js and the npm registry).
node-deps:
	cd testdata/node && npm ci --no-audit --no-fund --loglevel=error

test-race:
	$(GO) test -race -timeout 30m ./pkg/runner/... ./pkg/api/...

lint:
	@test -z "$$(gofmt -l .)" || (gofmt -l .; echo "gofmt needed"; exit 1)
	$(GO) vet ./...
	GOFLAGS= $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# Runs every fuzz target for FUZZTIME each (their seed corpora already run in `make test`).
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./pkg/...

clean:
	rm -rf bin
