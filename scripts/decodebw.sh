#!/usr/bin/env bash
# decodebw.sh FILE.gguf...: how close each engine's one-stream decode comes
# to the machine's memory bandwidth, measured together. Per round and file
# it runs a plain read of memory (scripts/membw), llama.cpp's tg128, then
# helexa's, then the plain read again, all with THREADS threads (default
# 2), and prints the read rates, both engines' tok/s and the weights GB/s
# each streams (tok/s × the file's bytes: a decode token reads every
# weight once). BENCHMARKS.md "Where it stands" has its output.
#
#   LLAMA_BENCH=/work/llama/build/bin/llama-bench MEMBW=/tmp/membw \
#     HELEXA=bin/helexa ROUNDS=3 scripts/decodebw.sh /work/bench/llama-3.2-1b-*.gguf
#
# MEMBW is scripts/membw/membw.c built as its header says.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 FILE.gguf..." >&2; exit 2; }
llama=${LLAMA_BENCH:?set LLAMA_BENCH to the llama-bench of llama.cpp}
membw=${MEMBW:?set MEMBW to a build of scripts/membw/membw.c}
helexa=${HELEXA:-bin/helexa}
threads=${THREADS:-2}
rounds=${ROUNDS:-3}

readbw() { OMP_NUM_THREADS=$threads "$membw" 2>&1 | awk '/read bandwidth/ { print $5 }'; }
# llama-bench's CSV: the last row's avg_ts, the second-to-last field
llama_tg() { "$llama" -m "$1" -t "$threads" -p 0 -n 128 -r 2 -o csv 2>/dev/null | tail -1 | awk -F'"' '{ print $(NF-3) }'; }
helexa_tg() { "$helexa" bench "$1" -p 8 -n 128 -r 2 -t "$threads" --streams 1 2>/dev/null | awk '$1 == "tg128" { print $2 }'; }

printf '%-6s %-30s %9s %9s %11s %12s %10s %11s\n' round file 'read GB/s' 'read GB/s' 'llama tok/s' 'helexa tok/s' 'llama GB/s' 'helexa GB/s'
for r in $(seq "$rounds"); do
	for f in "$@"; do
		bytes=$(stat -c %s "$f")
		before=$(readbw)
		l=$(llama_tg "$f")
		h=$(helexa_tg "$f")
		after=$(readbw)
		awk -v r="$r" -v f="$(basename "$f")" -v b="$before" -v a="$after" -v l="$l" -v h="$h" -v n="$bytes" \
			'BEGIN { printf "%-6s %-30s %9s %9s %11.1f %12.1f %10.1f %11.1f\n", r, f, b, a, l, h, l*n/1e9, h*n/1e9 }'
	done
done
