#!/bin/sh
# Runs helexa's llama-bench-style benchmark on a GGUF file, and, when
# LLAMA_BENCH points at a llama.cpp llama-bench binary, llama.cpp on the
# same file with the same threads, interleaved (helexa, llama.cpp, helexa,
# …) so both are measured in one window: these shared machines drift
# between windows, so compare only figures measured together.
#
#   scripts/bench.sh MODEL.gguf [ROUNDS]     # THREADS (default 2) sets -t
set -eu
cd "$(dirname "$0")/.."
model="${1:?usage: scripts/bench.sh MODEL.gguf [ROUNDS]}"
rounds="${2:-3}"
threads="${THREADS:-2}"
make build >/dev/null
i=1
while [ "$i" -le "$rounds" ]; do
	echo "== round $i: helexa"
	HELEXA_NUM_THREADS="$threads" bin/helexa bench "$model" --concurrency 1,2,4,8 -n 128
	if [ -n "${LLAMA_BENCH:-}" ]; then
		echo "== round $i: llama.cpp"
		"$LLAMA_BENCH" -m "$model" -t "$threads" -p 512 -n 128 -r 1
	fi
	i=$((i + 1))
done
