#!/usr/bin/env bash
# Compiles every C source under pkg/ (syntax and warnings only) as a
# machine without x86 vector extensions would see it: each x86 guard
# (defined(__x86_64__), defined(__AVX512F__), defined(__AVX2__)) taken as
# false, so that the portable branches of the cgo kernels keep building on
# arm64 and elsewhere; and that no loop holds nothing but _mm_prefetch
# (GCC 12's dead code elimination deletes such loops: the kernels prefetch
# with an asm statement). Run by `make lint`.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc=${CC:-gcc}
for f in $(git ls-files 'pkg/*.c' 'pkg/*.h'); do
	mkdir -p "$tmp/$(dirname "$f")"
	sed 's/defined(__x86_64__)/0/g; s/defined(__AVX512F__)/0/g; s/defined(__AVX2__)/0/g' "$f" >"$tmp/$f"
done
status=0
for f in $(git ls-files 'pkg/*.c'); do
	"$cc" -fsyntax-only -Wall -Werror -I"$tmp/$(dirname "$f")" "$tmp/$f" || { echo "check-c-portable: $f"; status=1; }
done
if git grep -nE 'for \(.*\) _mm_prefetch\(' -- 'pkg/*.c' 'pkg/*.h'; then
	echo "check-c-portable: a loop of _mm_prefetch alone is deleted by GCC; prefetch with an asm statement"
	status=1
fi
exit $status
