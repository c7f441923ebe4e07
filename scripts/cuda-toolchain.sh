#!/usr/bin/env bash
# Installs, without root, the parts of Debian bookworm's CUDA 11.8 packages
# (non-free) that helexa's CUDA runner needs, under one folder:
#
#   scripts/cuda-toolchain.sh headers DIR   cuda.h and the stub libcuda.so:
#                                           enough to compile and link
#                                           cmd/helexa-cuda (make cuda)
#   scripts/cuda-toolchain.sh nvcc DIR      also nvcc, cicc and the CUDA
#                                           headers: enough to turn the
#                                           kernels into PTX (make ptx)
#
# Packages are resolved through the archive's Packages index and checked
# against its SHA256 before they are unpacked; a finished install leaves
# DIR/.done-MODE so that a second run does nothing.
set -euo pipefail

mode=${1:?usage: cuda-toolchain.sh headers|nvcc DIR}
dir=${2:?usage: cuda-toolchain.sh headers|nvcc DIR}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
case "$mode" in headers | nvcc) ;; *)
	echo "cuda-toolchain.sh: unknown mode $mode (want headers or nvcc)" >&2
	exit 2
	;;
esac
[ -f "$dir/.done-$mode" ] && exit 0
mkdir -p "$dir/debs" "$dir/root"

index="$dir/debs/Packages-non-free"
if [ ! -s "$index" ]; then
	curl -fsSL --retry 3 "$mirror/dists/$suite/non-free/binary-amd64/Packages.gz" | gunzip >"$index.part"
	mv "$index.part" "$index"
fi

# fetch PACKAGE: downloads the package's .deb into $dir/debs (once),
# verifies it and prints its path.
fetch() {
	local pkg=$1 file sum out
	file=$(awk -v p="$pkg" '/^Package: /{q=$2} q==p && /^Filename: /{print $2; exit}' "$index")
	sum=$(awk -v p="$pkg" '/^Package: /{q=$2} q==p && /^SHA256: /{print $2; exit}' "$index")
	if [ -z "$file" ] || [ -z "$sum" ]; then
		echo "cuda-toolchain.sh: $pkg is not in $suite non-free" >&2
		return 1
	fi
	out="$dir/debs/$(basename "$file")"
	if [ ! -f "$out" ] || ! echo "$sum  $out" | sha256sum -c --status; then
		curl -fsSL --retry 3 -o "$out.part" "$mirror/$file"
		if ! echo "$sum  $out.part" | sha256sum -c --status; then
			echo "cuda-toolchain.sh: $pkg: checksum mismatch" >&2
			rm -f "$out.part"
			return 1
		fi
		mv "$out.part" "$out"
	fi
	echo "$out"
}

dev=$(fetch nvidia-cuda-dev)
if [ "$mode" = headers ]; then
	dpkg-deb --fsys-tarfile "$dev" | tar -x -C "$dir/root" \
		./usr/include/cuda.h ./usr/lib/x86_64-linux-gnu/stubs/libcuda.so
else
	dpkg-deb --fsys-tarfile "$dev" | tar -x -C "$dir/root" --wildcards \
		'./usr/include/*' './usr/lib/x86_64-linux-gnu/stubs/*'
	dpkg-deb -x "$(fetch nvidia-cuda-toolkit)" "$dir/root"
	dpkg-deb -x "$(fetch libnvvm4)" "$dir/root"
	bin="$dir/root/usr/lib/nvidia-cuda-toolkit/bin"
	# Debian's nvcc.profile is a link to /etc; this one finds everything
	# relative to nvcc itself.
	rm -f "$bin/nvcc.profile"
	cat >"$bin/nvcc.profile" <<'PROFILE'
TOP = $(_HERE_)/../../../..
NVVMIR_LIBRARY_DIR = $(_HERE_)/../libdevice
PATH += $(_HERE_):$(TOP)/usr/bin:
INCLUDES += "-I$(TOP)/usr/include" $(_SPACE_)
LIBRARIES =+ $(_SPACE_) "-L$(TOP)/usr/lib/x86_64-linux-gnu/stubs"
PROFILE
fi
touch "$dir/.done-$mode"
