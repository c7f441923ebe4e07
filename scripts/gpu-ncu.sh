#!/usr/bin/env bash
# Per-kernel GPU durations of a Qwen3-0.6B decode under Nsight Compute (ncu),
# for the bundle's runner and any older runners given as arguments
# (BENCHMARKS.md, "GPU"). ncu serialises the kernels and times each alone
# (gpu__time_duration, clocks left free, caches flushed between kernels), so
# the figures are each kernel's own cost, without the inflation of
# HELEXA_CUDA_TIMES's events; one decode step's worth of launches is
# profiled, SKIP launches into the run (by default about a hundred tokens
# in, where attention splits).
#
# ncu wraps the runner itself: helexa starts HELEXA_CUDA_RUNNER, here a
# wrapper that runs the real runner under ncu (the probe runs bare).
#
# On the device tool (carry .cache/gpu/bundle.tar.xz, and an older runner
# packed as in scripts/gpu-ab.sh if wanted):
#   tar -xJf .cache/gpu/bundle.tar.xz -C .cache/gpu &&
#     GPU_LOG_DIR=$OUT scripts/gpu-ncu.sh [/path/to/older/helexa-cuda ...]
set -u
cd "$(dirname "$0")/.."
logs=${GPU_LOG_DIR:-gpu-logs}
ncu=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
mkdir -p "$logs"
bin=$PWD/.cache/gpu/bin
export HELEXA_FIXTURES=$PWD/.cache/gpu/fixtures
dir=${GPU_BENCH_DIR:-.cache/gpu-bench}
model=$dir/qwen3-0.6b-q4_k_m.gguf
mkdir -p "$dir"
[ -f "$model" ] || "$bin/helexa" debug synth --shape qwen3-0.6b --quant q4_k_m -o "$model" >/dev/null || exit
wrap=$(mktemp /tmp/ncu-runner.XXXXXX)
cat >"$wrap" <<'WRAP'
#!/usr/bin/env bash
for a in "$@"; do [ "$a" = --probe ] && exec "$NCU_RUNNER" "$@"; done
exec "$NCU" --log-file "$NCU_LOG" --csv --clock-control none --launch-skip "$NCU_SKIP" --launch-count "$NCU_COUNT" \
	--metrics gpu__time_duration.sum "$NCU_RUNNER" "$@"
WRAP
chmod +x "$wrap"
i=0
for runner in "$bin/helexa-cuda" "$@"; do
	log=$logs/ncu-$i.csv
	echo "== $runner"
	NCU=$ncu NCU_RUNNER=$runner NCU_LOG=$log NCU_SKIP=${SKIP:-25000} NCU_COUNT=${COUNT:-260} HELEXA_CUDA_RUNNER=$wrap \
		timeout "${GPU_NCU_TIMEOUT:-150}" "$bin/helexa" bench "$model" -p 8 -n 128 -r 1 --streams 1 --device cuda \
		>/dev/null 2>&1 || echo "bench failed: rc=$?"
	python3 - "$log" <<'PY'
import collections, csv, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.reader(lines))
if len(rows) < 2:
    sys.exit("no kernels profiled")
h = rows[0]
ki, vi, ui = h.index("Kernel Name"), h.index("Metric Value"), h.index("Metric Unit")
scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
agg = collections.defaultdict(list)
for r in rows[1:]:
    agg[r[ki].split("(")[0]].append(float(r[vi].replace(",", "")) * scale[r[ui]])
total = sum(sum(v) for v in agg.values())
print(f"{len(rows) - 1} kernels, {total:.1f} µs")
print(f"{'kernel':32s} {'launches':>8s} {'mean µs':>8s} {'total µs':>9s}")
for k, v in sorted(agg.items(), key=lambda kv: -sum(kv[1])):
    print(f"{k:32s} {len(v):8d} {sum(v) / len(v):8.2f} {sum(v):9.1f}")
PY
	i=$((i + 1))
done | tee "$logs/ncu.txt"
rm -f "$wrap"
