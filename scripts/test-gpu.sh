#!/usr/bin/env bash
# make test-gpu: helexa's checks that need an NVIDIA GPU, in one command.
#
#  1. every fixture model (and every tiny family model) through helexa-cuda
#     against the same llama.cpp references and tolerances as the CPU;
#  2. the poison-and-recover test (a real CUDA failure injected through
#     HELEXA_CUDA_FAULT; the model shows poisoned; the next request works);
#  3. helexa bench -p 512 -n 128 --streams 1,2,4,8 on the synthetic
#     Qwen3-0.6B and Llama-3.2-1B shapes (Q4_K_M), on the GPU.
#
# Binaries already in bin/ are used as they are (build them elsewhere with
# `make build cuda` and copy them over); missing ones are built. Fixtures
# come from ../shared/fixtures or $HELEXA_FIXTURES. The benchmark models
# are written to $GPU_BENCH_DIR (default .cache/gpu-bench) once.
set -euo pipefail
cd "$(dirname "$0")/.."

[ -x bin/helexa ] || make build
[ -x bin/helexa-cuda ] || make cuda
export HELEXA_CUDA_RUNNER="$PWD/bin/helexa-cuda"

echo "== GPUs"
if ! bin/helexa-cuda --probe; then
	echo "test-gpu: helexa-cuda finds no usable GPU (see above)" >&2
	exit 1
fi

echo "== fixture references on the GPU"
go test -count=1 -timeout 30m -run '^TestReferenceOnGPU$' -v ./pkg/executor/cpuexec/

echo "== poison and recover"
go test -count=1 -timeout 10m -run '^TestGPUPoisonAndRecover$' -v ./cmd/helexa/

echo "== bench"
dir=${GPU_BENCH_DIR:-.cache/gpu-bench}
mkdir -p "$dir"
for shape in qwen3-0.6b llama-3.2-1b; do
	f="$dir/$shape-q4_k_m.gguf"
	[ -f "$f" ] || bin/helexa debug synth --shape "$shape" --quant q4_k_m -o "$f"
	bin/helexa bench "$f" -p 512 -n 128 -r 3 --streams 1,2,4,8 --device cuda
done
