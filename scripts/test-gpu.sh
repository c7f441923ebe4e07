#!/usr/bin/env bash
# make test-gpu: helexa's checks that need an NVIDIA GPU, in one command.
#
#  1. the fixture models (and every tiny family model) through helexa-cuda
#     against the same llama.cpp references and tolerances as the CPU;
#  2. the poison-and-recover test (a real CUDA failure injected through
#     HELEXA_CUDA_FAULT; the model shows poisoned; the next request works);
#  3. helexa bench -p 512 -n 128 --streams 1,2,4,8 on the synthetic
#     Qwen3-0.6B and Llama-3.2-1B shapes (Q4_K_M), on the GPU.
#
# Two ways to run it. With Go: binaries missing from bin/ are built and the
# tests run with `go test`; fixtures come from ../shared/fixtures or
# $HELEXA_FIXTURES. Without Go (a GPU machine with no toolchain and no
# network): unpack the bundle scripts/gpu-bundle.sh made into .cache/gpu
# first; its binaries, test binaries and fixtures are used (the reference
# test skips the fixtures the bundle leaves out). GPU_TEST_RUN narrows the
# reference subtests (a -run pattern below TestReferenceOnGPU).
#
# Every step runs even when one before it failed (a GPU machine's time is
# short); GPU_LOG_DIR, when set, gets one log per step; the script ends
# with a line per step and fails if any did. GPU_TEST_TIMEOUT and
# GPU_BENCH_TIMEOUT cap the test steps and each bench run (default 30m).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bundle=$root/.cache/gpu

if [ -x "$bundle/bin/helexa-cuda" ]; then
	bin=$bundle/bin
	export HELEXA_FIXTURES=${HELEXA_FIXTURES:-$bundle/fixtures}
	sub=${GPU_TEST_RUN:-.}
	gotest() { # PACKAGE-DIR TEST-BINARY -run PATTERN
		(cd "$1" && "$bin/$2" -test.count=1 -test.timeout=${GPU_TEST_TIMEOUT:-30m} -test.v -test.run "$3")
	}
else
	[ -x bin/helexa ] || make build
	[ -x bin/helexa-cuda ] || make cuda
	bin=$root/bin
	sub=${GPU_TEST_RUN:-.}
	gotest() {
		(cd "$1" && go test -count=1 -timeout ${GPU_TEST_TIMEOUT:-30m} -v -run "$3" .)
	}
fi
export HELEXA_CUDA_RUNNER="$bin/helexa-cuda" HELEXA_TEST_BIN="$bin/helexa"
logs=${GPU_LOG_DIR:-}
[ -z "$logs" ] || mkdir -p "$logs"
summary=()
failed=0

# step NAME COMMAND...: runs one step, logging it to $GPU_LOG_DIR/NAME.log.
step() {
	local name=$1 rc start=$SECONDS
	shift
	echo "== $name"
	if [ -n "$logs" ]; then
		"$@" 2>&1 | tee "$logs/$name.log"
		rc=${PIPESTATUS[0]}
	else
		"$@"
		rc=$?
	fi
	summary+=("$(printf '%-10s %s (%ds)' "$name" "$([ "$rc" = 0 ] && echo ok || echo "FAILED rc=$rc")" $((SECONDS - start)))")
	[ "$rc" = 0 ] || failed=1
	return 0
}

bench() {
	local dir=${GPU_BENCH_DIR:-.cache/gpu-bench} shape f
	mkdir -p "$dir"
	for shape in qwen3-0.6b llama-3.2-1b; do
		f="$dir/$shape-q4_k_m.gguf"
		[ -f "$f" ] || "$bin/helexa" debug synth --shape "$shape" --quant q4_k_m -o "$f" || return
		timeout "${GPU_BENCH_TIMEOUT:-30m}" "$bin/helexa" bench "$f" -p 512 -n 128 -r 3 --streams 1,2,4,8 --device cuda || return
	done
}

step probe "$bin/helexa-cuda" --probe
step references gotest pkg/executor/local local.test "^TestReferenceOnGPU\$/$sub"
step poison gotest cmd/helexa helexa-cmd.test '^TestGPUPoisonAndRecover$'
step bench bench

echo "== summary"
printf '%s\n' "${summary[@]}"
exit $failed
