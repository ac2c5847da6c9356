#!/usr/bin/env bash
# Session 19: scripts/device/s19-mma-ab.txt through default-check's wgvar part, once per
# build (build-v0, build-v1, build-v2: gpu_bench, tessera and carry-libs of three emitter
# versions, carried), round-robin twice; each build's summary under $OUT/vN-rR.
set -u
out=${OUT:-/tmp/ab-out}
for r in 1 2; do
  for v in 0 1 2; do
    OUT=$out/v$v-r$r DC_PARTS=wgvar DC_WGVAR=scripts/device/s19-mma-ab.txt DC_BUDGET=200 \
      scripts/device/default-check build-v$v >/dev/null 2>&1
    echo "== v$v round $r"; grep -E "fp32x3 \| [0-9]" "$out/v$v-r$r/summary.txt"
    grep -E "^\| .* random \|" "$out/v$v-r$r/summary.txt" | awk -F'|' '{print "   " $2 "|" $7}' | head -8
  done
done
