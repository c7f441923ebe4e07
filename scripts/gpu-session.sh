#!/usr/bin/env bash
# One device call that gives a GPU session everything it needs to judge a
# change against llama.cpp (BENCHMARKS.md, "GPU"), in this order:
#
#  1. llama.cpp's CUDA build (scripts/bench-gpu-llama.sh build) starts in
#     the background from LLAMA_SRC (a pack made with
#     `scripts/bench-gpu-llama.sh pack`; skipped when unset or missing);
#  2. make test-gpu's steps (scripts/test-gpu.sh: references, poison and
#     recover, helexa bench), with the GPU bundle when one is unpacked;
#  3. per-kernel GPU times of a Qwen3 decode run (HELEXA_CUDA_TIMES);
#  4. once the build is done (or LLAMA_DEADLINE seconds from the start,
#     default 230), llama.cpp's bench on the same files;
#  5. helexa's bench again, after llama.cpp's: a build on every core
#     starves the runner's host thread, so the figures of step 2 are only
#     trustworthy when no build ran; quote step 5 beside step 4;
#  6. helexa's decode on Qwen3 without CUDA graphs (HELEXA_CUDA_GRAPHS=0),
#     the A/B of the graphs in the same window.
#
# Logs go to GPU_LOG_DIR (default ./gpu-logs). On the device tool:
#   tar -xJf .cache/gpu/bundle.tar.xz -C .cache/gpu &&
#     GPU_LOG_DIR=$OUT LLAMA_SRC=.cache/gpu/llama-src.tar.xz scripts/gpu-session.sh
set -uo pipefail
cd "$(dirname "$0")/.."
logs=${GPU_LOG_DIR:-gpu-logs}
mkdir -p "$logs"
t0=$SECONDS
bench_dir=${GPU_BENCH_DIR:-.cache/gpu-bench}
bin=bin
[ -x .cache/gpu/bin/helexa-cuda ] && bin=.cache/gpu/bin
export HELEXA_CUDA_RUNNER=$PWD/$bin/helexa-cuda

bpid=
if [ -n "${LLAMA_SRC:-}" ] && [ -f "$LLAMA_SRC" ]; then
	setsid scripts/bench-gpu-llama.sh build "$LLAMA_SRC" /tmp/llama >"$logs/llama-build.log" 2>&1 &
	bpid=$!
fi

GPU_LOG_DIR=$logs GPU_TEST_TIMEOUT=${GPU_TEST_TIMEOUT:-150s} GPU_BENCH_TIMEOUT=${GPU_BENCH_TIMEOUT:-90s} \
	scripts/test-gpu.sh >"$logs/test-gpu.log" 2>&1
echo "== test-gpu rc=$? at $((SECONDS - t0))s"
tail -5 "$logs/test-gpu.log"

qwen=$bench_dir/qwen3-0.6b-q4_k_m.gguf
if [ -f "$qwen" ]; then
	HELEXA_CUDA_TIMES=$logs/times-decode timeout 90 "$bin/helexa" bench "$qwen" -p 8 -n 128 -r 1 --streams 1 --device cuda \
		>/dev/null 2>&1
	cat "$logs"/times-decode.* 2>/dev/null
fi

if [ -n "$bpid" ]; then
	while kill -0 "$bpid" 2>/dev/null && [ $((SECONDS - t0)) -lt "${LLAMA_DEADLINE:-230}" ]; do sleep 2; done
	kill -0 "$bpid" 2>/dev/null && kill -- -"$bpid" 2>/dev/null && echo "== llama.cpp build stopped at the deadline"
	if [ -x /tmp/llama/build/bin/llama-bench ]; then
		echo "== llama.cpp at $((SECONDS - t0))s"
		timeout 120 scripts/bench-gpu-llama.sh bench /tmp/llama "$bench_dir"/*.gguf >"$logs/llama-bench.log" 2>&1
		grep -E 'pp512|tg128|^\| +[0-9]+ +\|' "$logs/llama-bench.log"
	fi
	echo "== helexa again at $((SECONDS - t0))s"
	for f in "$bench_dir"/*.gguf; do
		timeout 90 "$bin/helexa" bench "$f" -p 512 -n 128 -r 3 --streams 1,2,4,8 --device cuda 2>&1 | grep -v '^$' |
			tee -a "$logs/bench-after.log"
	done
fi
if [ -f "$qwen" ]; then
	echo "== helexa without graphs at $((SECONDS - t0))s"
	HELEXA_CUDA_GRAPHS=0 timeout 60 "$bin/helexa" bench "$qwen" -p 512 -n 128 -r 3 --streams 1,8 --device cuda 2>&1 | grep -v '^$' |
		tee -a "$logs/bench-nographs.log"
fi
echo "== done at $((SECONDS - t0))s"
