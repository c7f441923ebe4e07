#!/usr/bin/env bash
# llama.cpp's CUDA build beside helexa's GPU figures (BENCHMARKS.md), on a
# GPU machine with CMake and CUDA's nvcc but no network:
#
#   scripts/bench-gpu-llama.sh pack SRC-DIR OUT.tar.xz
#       (here) packs the parts of a llama.cpp checkout a CUDA build of
#       llama-bench and llama-batched-bench needs, about 4 MB;
#   scripts/bench-gpu-llama.sh build SRC(.tar.xz or dir) BUILD-DIR
#       (there) unpacks and builds both tools for CUDA_ARCH (default 90);
#   scripts/bench-gpu-llama.sh bench BUILD-DIR FILE.gguf...
#       (there) llama-bench -p 512 -n 128 and llama-batched-bench
#       -npp 4 -ntg 128 -npl 1,2,4,8, every layer on the GPU: the same
#       shape of run as `helexa bench -p 512 -n 128 --streams 1,2,4,8`.
#
# The anchor is llama.cpp 3f545beccee69d9975f466ec7e45fd9aacd8ba90.
set -euo pipefail

pack() { # SRC-DIR OUT
	local src=$1 out=$2 x=()
	for d in vulkan sycl opencl hexagon et metal webgpu openvino cann; do
		x+=(--exclude="ggml/src/ggml-$d")
	done
	tar -C "$src" "${x[@]}" --exclude=tools/ui --exclude='tools/server/public*' --exclude='*.gguf' --exclude=.git \
		-cf - CMakeLists.txt cmake common ggml include src tools vendor licenses LICENSE app | xz -T0 -6 >"$out.part"
	mv "$out.part" "$out"
}

build() { # SRC BUILD-DIR
	local src=$1 dir=$2
	mkdir -p "$dir"
	if [ -f "$src" ]; then
		mkdir -p "$dir/src"
		tar -xJf "$src" -C "$dir/src"
		src=$dir/src
	fi
	command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
	cmake -S "$src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
		-DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
		-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF
	cmake --build "$dir/build" -j"$(nproc)" --target llama-bench llama-batched-bench
}

bench() { # BUILD-DIR FILE...
	local bin=$1/build/bin f
	shift
	for f in "$@"; do
		echo "== $f"
		"$bin/llama-bench" -m "$f" -ngl 99 -p 512 -n 128 -r 3
		"$bin/llama-batched-bench" -m "$f" -ngl 99 -c 4096 -npp 4 -ntg 128 -npl 1,2,4,8 2>&1 | grep '^|'
	done
}

case ${1:-} in
pack | build | bench)
	cmd=$1
	shift
	"$cmd" "$@"
	;;
*)
	sed -n '2,14p' "$0" >&2
	exit 2
	;;
esac
