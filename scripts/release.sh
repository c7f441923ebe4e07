#!/bin/sh
# Builds release binaries of helexa into dist/ with version stamps and a
# SHA256SUMS file: linux/amd64 with the C kernels (cgo), and pure-Go
# builds for the other targets (no cross C toolchain needed).
#
#   scripts/release.sh [TARGET ...]     # default: linux/amd64 linux/arm64 darwin/arm64
set -eu
cd "$(dirname "$0")/.."
version="$(git describe --tags --always --dirty 2>/dev/null || echo dev)"
commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
targets="${*:-linux/amd64 linux/arm64 darwin/arm64}"
rm -rf dist && mkdir -p dist
for t in $targets; do
	os="${t%/*}" arch="${t#*/}"
	cgo=0
	[ "$os/$arch" = "$(go env GOOS)/$(go env GOARCH)" ] && cgo=1
	out="dist/helexa-$version-$os-$arch"
	echo "building $out (cgo=$cgo)"
	CGO_ENABLED=$cgo GOOS=$os GOARCH=$arch go build -trimpath \
		-ldflags "-s -w -X main.version=$version -X main.commit=$commit" -o "$out" ./cmd/helexa
done
(cd dist && sha256sum helexa-* > SHA256SUMS)
cat dist/SHA256SUMS
