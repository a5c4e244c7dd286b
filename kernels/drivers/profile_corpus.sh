#!/usr/bin/env bash
# Profiles every corpus driver at both sizes with `roofcast profile` and writes one manifest
# (dev.csv columns; target "cuda" so `roofcast evaluate --sources kernels` finds the sources).
#   kernels/drivers/profile_corpus.sh [OUT] [GPU]   e.g. kernels/corpus_h100.csv h100
# GPU defaults to the device ncu reports. Needs nvcc, ncu and a GPU; run from anywhere.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../corpus_h100.csv}"
gpu_flag=()
if [ -n "${2:-}" ]; then gpu_flag=(--gpu "$2"); fi
build="${BUILD:-$here/build}"
make -C "$here" BUILD="$build" ARCH="${ARCH:-sm_90}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for bin in "$build"/*; do
    stem="$(basename "$bin")"
    for size in small large; do
        roofcast profile ${gpu_flag[@]+"${gpu_flag[@]}"} --target cuda -f csv -o "$tmp/$stem-$size.csv" \
            -- "$bin" "$size" > /dev/null
        echo "profiled $stem $size"
    done
done
# one header, then every row
first=1
for f in "$tmp"/*.csv; do
    if [ $first = 1 ]; then cat "$f"; first=0; else tail -n +2 "$f"; fi
done > "$out"
{
    echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
    echo "# $(ncu --version | tail -1)"
    echo "# $(nvcc --version | tail -1)"
} > "$out.versions"
echo "wrote $out ($(($(wc -l < "$out") - 1)) launches) and $out.versions"
