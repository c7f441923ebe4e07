#!/usr/bin/env bash
# Interleaved A/B of two helexa-cuda runners on one GPU (BENCHMARKS.md,
# "GPU"): the bundle's runner (new) and an older one packed beside it
# (old), each timed on the synthetic Qwen3-0.6B and Llama-3.2-1B Q4_K_M
# files in rounds of new, old, so that both see the same machine and
# window. Then per-kernel GPU times of the new runner's Qwen3 decode.
#
# Here:
#   git worktree add /tmp/old REV && (cd /tmp/old && make cuda)
#   xz -c /tmp/old/bin/helexa-cuda > .cache/gpu/old-cuda.xz
#   make gpu-bundle
# On the device tool (carry .cache/gpu/bundle.tar.xz and .cache/gpu/old-cuda.xz):
#   GPU_LOG_DIR=$OUT scripts/gpu-ab.sh
set -u
cd "$(dirname "$0")/.."
logs=${GPU_LOG_DIR:-gpu-logs}
rounds=${GPU_AB_ROUNDS:-2}
mkdir -p "$logs"
tar -xJf .cache/gpu/bundle.tar.xz -C .cache/gpu
xz -dc .cache/gpu/old-cuda.xz >/tmp/helexa-cuda-old && chmod +x /tmp/helexa-cuda-old
export HELEXA_FIXTURES=$PWD/.cache/gpu/fixtures
bin=.cache/gpu/bin
dir=${GPU_BENCH_DIR:-.cache/gpu-bench}
mkdir -p "$dir"
"$bin/helexa" debug synth --shape qwen3-0.6b --quant q4_k_m -o "$dir/qwen3-0.6b-q4_k_m.gguf" >/dev/null &
"$bin/helexa" debug synth --shape llama-3.2-1b --quant q4_k_m -o "$dir/llama-3.2-1b-q4_k_m.gguf" >/dev/null &
wait
for round in $(seq "$rounds"); do
	for which in new old; do
		runner=$PWD/$bin/helexa-cuda
		[ "$which" = old ] && runner=/tmp/helexa-cuda-old
		for f in "$dir"/qwen3-0.6b-q4_k_m.gguf "$dir"/llama-3.2-1b-q4_k_m.gguf; do
			echo "== $which $(basename "$f" .gguf) round $round"
			HELEXA_CUDA_RUNNER=$runner timeout 60 "$bin/helexa" bench "$f" -p 512 -n 128 -r 3 --streams 1,8 --device cuda 2>&1 |
				grep -E 'tg128|pp512|^ +[18] '
		done
	done
done | tee "$logs/ab.log"
HELEXA_CUDA_RUNNER=$PWD/$bin/helexa-cuda HELEXA_CUDA_TIMES=$logs/times timeout 60 "$bin/helexa" bench \
	"$dir/qwen3-0.6b-q4_k_m.gguf" -p 8 -n 128 -r 1 --streams 1 --device cuda >/dev/null 2>&1
cat "$logs"/times.* 2>/dev/null | head -12
