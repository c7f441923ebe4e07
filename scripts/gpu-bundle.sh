#!/usr/bin/env bash
# Packs what `make test-gpu` needs on a GPU machine that has no Go and no
# network (the device machines lent to sessions): stripped binaries —
# helexa, helexa-cuda and the two test binaries — and the fixtures the GPU
# tests read, minus the big-vocabulary Qwen3 models and a few whose device
# path another fixture covers, into .cache/gpu/bundle.tar.xz (about 37 MB,
# under the 64 MiB a device call carries with the working tree). On the
# GPU machine:
#
#   tar -xJf .cache/gpu/bundle.tar.xz -C .cache/gpu && scripts/test-gpu.sh
#
# test-gpu.sh finds the bundle's binaries and fixtures there by itself.
set -euo pipefail
cd "$(dirname "$0")/.."
fixtures=${HELEXA_FIXTURES:-../shared/fixtures}
out=.cache/gpu
stage=$out/stage
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/fixtures/models" "$stage/fixtures/reference" "$stage/fixtures/tokenizer"

make cuda >/dev/null
cp bin/helexa-cuda "$stage/bin/"
strip "$stage/bin/helexa-cuda"
go build -ldflags "-s -w" -o "$stage/bin/helexa" ./cmd/helexa
go test -c -ldflags "-s -w" -o "$stage/bin/local.test" ./pkg/executor/local
go test -c -ldflags "-s -w" -o "$stage/bin/helexa-cmd.test" ./cmd/helexa

for f in "$fixtures"/models/*.gguf; do
	name=$(basename "$f" .gguf)
	# the big-vocabulary Qwen3 models, and types whose device path another
	# fixture already covers (F16 conversion on the host, the F32 kernels)
	case "$name" in qwen3-tiny-* | qwen3moe-tiny-* | qwen2-tiny-F32 | llama-q-BF16 | llama-q-Q2_K | llama-q-Q4_1 | llama-q-Q5_0 | llama-q-Q5_1 | llama-2-tiny-random) continue ;; esac
	cp "$f" "$stage/fixtures/models/"
	[ -f "$fixtures/reference/$name.json" ] && cp "$fixtures/reference/$name.json" "$stage/fixtures/reference/"
done
cp "$fixtures"/tokenizer/vocab-qwen3.gguf "$fixtures"/tokenizer/vocab-llama3.gguf "$stage/fixtures/tokenizer/"

tar -C "$stage" -cf - bin fixtures | xz -T2 -9 >"$out/bundle.tar.xz.part"
mv "$out/bundle.tar.xz.part" "$out/bundle.tar.xz"
rm -rf "$stage"
ls -l "$out/bundle.tar.xz"
