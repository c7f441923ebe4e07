#!/bin/sh
# helexa installer: builds the helexa binary from source and installs it
# into $PREFIX/bin (default ~/.local/bin).
#
#   sh install.sh                     # from a checkout of the repository
#   curl -fsSL <raw url>/install.sh | sh   # clones $HELEXA_REPO first
#
# Needs Go (the version in go.mod, or newer) and a C compiler (gcc or clang)
# for the CPU kernels; set CGO_ENABLED=0 to build the slower pure-Go kernels
# without one.
set -eu

PREFIX="${PREFIX:-$HOME/.local}"
REPO="${HELEXA_REPO:-https://github.com/helexa/helexa}"
REF="${HELEXA_REF:-main}"

say() { printf '%s\n' "$*" >&2; }
die() { say "install.sh: $*"; exit 1; }

command -v go >/dev/null 2>&1 || die "Go is not installed: get it from https://go.dev/dl/ (the version go.mod names, or newer)"

src=""
if [ -f go.mod ] && grep -q '^module github.com/helexa/helexa' go.mod; then
	src="$(pwd)"
elif [ -n "${HELEXA_SRC:-}" ]; then
	src="$HELEXA_SRC"
else
	command -v git >/dev/null 2>&1 || die "git is needed to fetch the source (or run this script from a checkout)"
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	say "fetching $REPO ($REF)"
	git clone --depth 1 --branch "$REF" "$REPO" "$tmp/helexa" >/dev/null 2>&1 || die "cannot clone $REPO"
	src="$tmp/helexa"
fi

want="$(sed -n 's/^go \([0-9.]*\).*/\1/p' "$src/go.mod")"
have="$(go env GOVERSION | sed 's/^go//')"
if [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -n1)" != "$want" ]; then
	die "Go $have is older than the $want go.mod needs: get a newer one from https://go.dev/dl/"
fi

if [ "${CGO_ENABLED:-1}" != "0" ]; then
	cc="${CC:-}"
	[ -n "$cc" ] || for c in gcc clang cc; do command -v "$c" >/dev/null 2>&1 && cc="$c" && break; done
	[ -n "$cc" ] || die "no C compiler found (gcc or clang) for the CPU kernels: install one, or run with CGO_ENABLED=0 for the pure-Go kernels"
fi

version="$(git -C "$src" describe --tags --always --dirty 2>/dev/null || echo dev)"
commit="$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)"
mkdir -p "$PREFIX/bin"
say "building helexa $version into $PREFIX/bin"
(cd "$src" && go build -ldflags "-s -w -X main.version=$version -X main.commit=$commit" -o "$PREFIX/bin/helexa.new" ./cmd/helexa)
mv "$PREFIX/bin/helexa.new" "$PREFIX/bin/helexa"

case ":$PATH:" in
*":$PREFIX/bin:"*) ;;
*) say "note: $PREFIX/bin is not on your PATH; add it: export PATH=\"$PREFIX/bin:\$PATH\"" ;;
esac
say "installed $PREFIX/bin/helexa. Next:"
say "  helexa run qwen3:0.6b            # pull a model and chat with it"
say "  helexa serve                     # the OpenAI-compatible API on 127.0.0.1:13131"
