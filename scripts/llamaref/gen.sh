#!/usr/bin/env bash
# gen.sh regenerates the llama.cpp references of the tiny family models in
# pkg/models/arch/testdata: it writes each model with `helexa debug synth`
# (seed 15, helexa's own quantizers: f32, q8_0, q4_k_m) and runs llamaref on
# it with the fixtures' "short" and "paragraph" prompts.
#
#   LLAMA=/work/llama HELEXA_FIXTURES=/path/to/shared/fixtures scripts/llamaref/gen.sh
#
# LLAMA is a llama.cpp checkout (src/) and build (build/) at commit
# 3f545beccee69d9975f466ec7e45fd9aacd8ba90.
set -euo pipefail
: "${LLAMA:?set LLAMA to the llama.cpp directory holding src/ and build/}"
: "${HELEXA_FIXTURES:?set HELEXA_FIXTURES to the shared fixtures directory}"
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -O2 -std=c++17 -o "$work/llamaref" "$root/scripts/llamaref/llamaref.cpp" \
	-I"$LLAMA/src/include" -I"$LLAMA/src/ggml/include" \
	-L"$LLAMA/build/bin" -lllama -lggml -lggml-base -lggml-cpu \
	-Wl,-rpath,"$LLAMA/build/bin" -fopenmp -lstdc++ -lm -lpthread
(cd "$root" && go build -o "$work/helexa" ./cmd/helexa)
python3 - "$HELEXA_FIXTURES/reference/llama-q-F32.json" "$work" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1]))["cases"]:
    if c["name"] in ("short", "paragraph"):
        open(f"{sys.argv[2]}/{c['name']}.txt", "w", encoding="utf-8").write(c["prompt"])
PY
for shape in phi3-tiny phi35-tiny mistral3-tiny gemma3-tiny qwen35-tiny qwen35moe-tiny; do
	for quant in f32 q8_0 q4_k_m; do
		m="$work/$shape-$quant.gguf"
		"$work/helexa" debug synth --shape "$shape" --quant "$quant" --seed 15 -o "$m" >/dev/null
		sha=$(sha256sum "$m" | cut -d' ' -f1)
		"$work/llamaref" "$m" "$sha" short="$work/short.txt" paragraph="$work/paragraph.txt" \
			>"$root/pkg/models/arch/testdata/$shape-$quant.json" 2>"$work/$shape-$quant.log"
		echo "$shape-$quant.json  $sha"
	done
done
