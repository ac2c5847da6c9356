#!/usr/bin/env bash
# Session 27, one call: the early full-barrier test (build-dev) against the build
# before it (build-base), alternated; then, only if it won at 4096^3 by more
# than the spread, the GPU families on build-dev and the strict zoo's square class.
set -u
scripts/device/ab build-base build-dev 3 4096x4096x4096 8192x8192x8192 512x4096x4096
s=${OUT:-/tmp/ab-out}/ab-summary.txt
med() { awk -v side="$1" '/^round/ {cur=$3} cur==side && /4096x4096x4096 \| strict/ {split($0,f,"|"); split(f[5],r," "); print r[1]}' "$s" | sort -n | sed -n 2p; }
a=$(med A); b=$(med B)
echo "4096^3 median of three: A $a B $b" | tee -a "$s"
if awk -v a="$a" -v b="$b" 'BEGIN {exit !(a != "" && b != "" && b < a - 0.003)}'; then
  DC_PARTS=gputest DC_GPU_PLANS="pad=0," DC_GPU_ONLY="*contract_families *specials_families" \
    scripts/device/default-check build-dev
  ZOO_PARTS=strict ZOO_SET=full ZOO_CLASSES="square" ZOO_TIMEOUT=240 scripts/device/zoo-run build-dev
else
  echo "no win at 4096^3: zoo skipped" | tee -a "$s"
fi
