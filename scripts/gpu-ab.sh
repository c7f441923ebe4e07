#!/usr/bin/env bash
# Interleaved A/B of helexa-cuda runners on one GPU (BENCHMARKS.md,
# "GPU"): the bundle's runner (new) and every older or variant runner
# packed beside it as .cache/gpu/NAME-cuda.xz (NAME: old, var, …), each
# timed on the synthetic Qwen3-0.6B and Llama-3.2-1B Q4_K_M files in
# rounds of new, then each NAME, so that all see the same machine and
# window. Then per-kernel GPU times of each runner's Qwen3 decode.
#
# Here:
#   git worktree add /tmp/old REV && (cd /tmp/old && make cuda)
#   xz -c /tmp/old/bin/helexa-cuda > .cache/gpu/old-cuda.xz
#   (more runners: xz -c …/bin/helexa-cuda > .cache/gpu/NAME-cuda.xz)
#   make gpu-bundle
# On the device tool (carry .cache/gpu; with the bundle, the tree and the
# runners under the 64 MiB a call carries):
#   GPU_LOG_DIR=$OUT scripts/gpu-ab.sh
# GPU_AB_ROUNDS sets the rounds (default 2). GPU_AB_ENVS adds variants of
# the bundle's runner under other settings, each LABEL:VAR=VALUE[,VAR=VALUE]
# (e.g. GPU_AB_ENVS="pdl0:HELEXA_CUDA_PDL=0"), timed in the same rounds.
# The log ends with each runner's medians (scripts/ab-medians.sh).
set -u
cd "$(dirname "$0")/.."
logs=${GPU_LOG_DIR:-gpu-logs}
rounds=${GPU_AB_ROUNDS:-2}
mkdir -p "$logs"
tar -xJf .cache/gpu/bundle.tar.xz -C .cache/gpu
names=()
for f in .cache/gpu/*-cuda.xz; do
	[ -f "$f" ] || continue
	name=$(basename "$f" -cuda.xz)
	xz -dc "$f" >"/tmp/helexa-cuda-$name" && chmod +x "/tmp/helexa-cuda-$name" && names+=("$name")
done
export HELEXA_FIXTURES=$PWD/.cache/gpu/fixtures
bin=.cache/gpu/bin
dir=${GPU_BENCH_DIR:-.cache/gpu-bench}
mkdir -p "$dir"
"$bin/helexa" debug synth --shape qwen3-0.6b --quant q4_k_m -o "$dir/qwen3-0.6b-q4_k_m.gguf" >/dev/null &
"$bin/helexa" debug synth --shape llama-3.2-1b --quant q4_k_m -o "$dir/llama-3.2-1b-q4_k_m.gguf" >/dev/null &
wait
declare -A envs=()
for v in ${GPU_AB_ENVS:-}; do
	label=${v%%:*}
	envs[$label]=${v#*:}
	names+=("$label")
done
# runner NAME: the runner binary of NAME (new and the GPU_AB_ENVS labels:
# the bundle's)
runner() {
	if [ "$1" = new ] || [ -n "${envs[$1]:-}" ]; then echo "$PWD/$bin/helexa-cuda"; else echo "/tmp/helexa-cuda-$1"; fi
}
# settings NAME: NAME's environment settings, one per line
settings() {
	[ -z "${envs[$1]:-}" ] || tr ',' '\n' <<<"${envs[$1]}"
}
for round in $(seq "$rounds"); do
	for which in new "${names[@]}"; do
		for f in "$dir"/qwen3-0.6b-q4_k_m.gguf "$dir"/llama-3.2-1b-q4_k_m.gguf; do
			echo "== $which $(basename "$f" .gguf) round $round"
			mapfile -t sets < <(settings "$which")
			env "${sets[@]}" HELEXA_CUDA_RUNNER="$(runner "$which")" timeout 60 "$bin/helexa" bench "$f" -p 512 -n 128 -r 3 \
				--streams 1,8 --device cuda 2>&1 | grep -E 'tg128|pp512|^ +[18] '
		done
	done
done | tee "$logs/ab.log"
scripts/ab-medians.sh "$logs/ab.log" | tee "$logs/medians.log"
for which in new "${names[@]}"; do
	rm -f /tmp/times.*
	mapfile -t sets < <(settings "$which")
	env "${sets[@]}" HELEXA_CUDA_RUNNER="$(runner "$which")" HELEXA_CUDA_TIMES=/tmp/times timeout 60 "$bin/helexa" bench \
		"$dir/qwen3-0.6b-q4_k_m.gguf" -p 8 -n 128 -r 1 --streams 1 --device cuda >/dev/null 2>&1
	{
		echo "== $which"
		cat /tmp/times.* 2>/dev/null | head -12
	} >>"$logs/times.log"
done
cat "$logs/times.log"
