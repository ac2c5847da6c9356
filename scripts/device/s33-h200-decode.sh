#!/usr/bin/env bash
# scripts/device/s33-h200-decode.sh BUILD: session 33's run 7 on an H200 (run 7 was an
# H100): tune the training shape 64x10944x4928 NT for S seconds (default 90) into a fresh
# database, then replay the held-back 64x11008x4096 NT tuned vs default (4 rounds, fresh
# processes) and audit. Writes $OUT/tune/, $OUT/replay.tgz, $OUT/audit.txt, $OUT/plan.txt.
set -u
build=$(cd "${1:-build}" && pwd) || exit 2
export LD_LIBRARY_PATH="$build/carry-libs:$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_CACHE_HOME=/tmp/tsr-s33-cache
T=$build/tessera
O=${OUT:-/tmp/s33-out}
db=/tmp/s33.db
rm -f "$db" "$db-wal" "$db-shm"
mkdir -p "$O/tune"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$O/device.txt"
timeout 200 "$T" tune --backend cuda --shape 64x10944x4928:NT --precision strict \
  --max-seconds "${S33_SECONDS:-90}" --rounds 4 --db "$db" --out "$O/tune" >"$O/tune/console.txt" 2>&1
echo "tune rc=$?"; grep -E "^(incumbent|best|replay|decision)|median" "$O/tune/console.txt"
TESSERA_TUNE_DB=$db "$T" plan --backend cuda --shape 64x11008x4096:NT --precision strict | tee "$O/plan.txt"
TESSERA_TUNE_DB=$db timeout 120 "$T" bench --routes tessera-gpu,tessera-gpu-default \
  --shapes 64x11008x4096:NT --precision strict --rounds 4 --samples 5 --sample-ms 5 \
  --warmup-ms 20 --no-progress --out /tmp/s33-replay >"$O/replay.txt" 2>&1
echo "replay rc=$?"
timeout 60 "$T" audit /tmp/s33-replay | tee "$O/audit.txt" | tail -3
grep -A4 "tessera-gpu/tessera-gpu-default" /tmp/s33-replay/report.md | head -12
tar czf "$O/replay.tgz" -C /tmp s33-replay
gzip -9 "$O"/tune/*.json 2>/dev/null
