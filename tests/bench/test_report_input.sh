#!/usr/bin/env bash
# No results directory can crash, hang or exhaust `tessera report` or
# `tessera audit`: each hostile case runs under a wall-clock limit and a
# virtual-memory limit and must end with exit 2 and one line on stderr naming
# the problem. Documents: protocol.rounds of 10^12 (was a segfault), no
# `rows`, a negative and a string sample time, a duplicate key. Files in
# place of results.json: a symlink to /dev/zero, a FIFO, a sparse file over
# the 1 GiB limit, a directory. Controls: the committed directory and an
# interrupted copy of it still report (exit 0) under the same limits, and a
# document of 100000 shapes is audited in bounded time.
# usage: bash test_report_input.sh BUILD_DIR SOURCE_DIR
set -u
B=$1
S=$2
T=$B/tessera
D=$S/docs/results/2026-11-29-cpu-tiny
W=$(mktemp -d /tmp/tsr-report-input.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# Limits: 20 s of wall clock, 1 GiB of address space (the sanitizers reserve
# terabytes of address space, so their builds run under the time limit only;
# under ThreadSanitizer the 100000-shape audit below took 44 s against 7 s,
# loaded 2-core machine, so there the limit is 150 s).
SECS=20
MEM_KB=$((1024 * 1024))
grep -Eq '^TSR_(SANITIZE|FUZZ):[A-Z]+=(ON|address|thread)$' "$B/CMakeCache.txt" 2>/dev/null && MEM_KB=unlimited
# under AddressSanitizer it took 23 s alone and overran 20 s in .ci/run's parallel
# ctest (session 14): 60 s there
grep -Eq '^TSR_SANITIZE:[A-Z]*=(ON|address)$' "$B/CMakeCache.txt" 2>/dev/null && SECS=60
grep -q '^TSR_SANITIZE:[A-Z]*=thread$' "$B/CMakeCache.txt" 2>/dev/null && SECS=150

# limited VERB DIR: runs tessera VERB DIR under the limits; output in $W/out, $W/err.
limited() {
  (ulimit -v "$MEM_KB" && exec timeout -k 5 "$SECS" "$T" "$1" "$2" ${3:+"$3"}) >"$W/out" 2>"$W/err"
}
# refused VERB DIR NEEDLE: exit 2, one line "tessera VERB: ..." containing NEEDLE.
refused() {
  local verb=$1 dir=$2 needle=$3 rc
  limited "$verb" "$dir"
  rc=$?
  local what="$verb $(basename "$dir")"
  if [ "$rc" -ne 2 ]; then
    bad "$what: exit $rc, expected 2 (124: timed out; 134/137/139: killed)"; head -5 "$W/err"; return
  fi
  if [ "$(wc -l <"$W/err")" -ne 1 ] || ! grep -q "^tessera $verb: " "$W/err"; then
    bad "$what: stderr is not one 'tessera $verb:' line:"; head -5 "$W/err"; return
  fi
  if ! grep -qF -- "$needle" "$W/err"; then
    bad "$what: stderr does not say '$needle': $(cat "$W/err")"; return
  fi
  ok "$what refused: $(cut -c1-150 "$W/err")"
}
# copy NAME 'python statements over d (results.json)': DIR $W/NAME
copy() {
  rm -rf "${W:?}/$1" && cp -r "$D" "$W/$1" && python3 - "$W/$1/results.json" "$2" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
exec(sys.argv[2])
json.dump(d, open(p, "w"), indent=1)
PY
}

# ---- controls ------------------------------------------------------------------
copy pristine 'pass'
limited report "$W/pristine" --quiet
rc=$?
if [ "$rc" -eq 0 ] && cmp -s "$D/tables.json" "$W/pristine/tables.json"; then
  ok "the committed directory reports under the limits, tables.json identical"
else
  bad "the committed directory: report exit $rc"; cat "$W/err"
fi
limited audit "$W/pristine"
rc=$?
if [ "$rc" -eq 0 ]; then ok "the committed directory audits under the limits"; else bad "audit of the committed directory: exit $rc"; fi
# An interrupted run (as the bench leaves it: not complete, no summary nor
# finished_utc, three of its four rounds, no realized order) is still reported.
copy interrupted 'd["complete"] = False; del d["summary"]; del d["finished_utc"]; d["rows"] = d["rows"][:12]; d["order"] = {"base_routes": d["order"]["base_routes"]}'
limited report "$W/interrupted" --quiet
rc=$?
if [ "$rc" -eq 0 ] && grep -q "^\*\*INCOMPLETE RUN\*\*" "$W/interrupted/report.md" && grep -q "(3/4)" "$W/interrupted/report.md"; then
  ok "an interrupted run is reported (exit 0, INCOMPLETE RUN, 3 of 4 rounds)"
else
  bad "an interrupted run: report exit $rc"; cat "$W/err"
fi

# ---- hostile documents -----------------------------------------------------------
copy rounds 'd["protocol"]["rounds"] = 10**12'
refused report "$W/rounds" "protocol.rounds: 1000000000000, must be an integer in [1, 1000000]"
copy rounds_fit 'd["protocol"]["rounds"] = 1000000'
refused report "$W/rounds_fit" "1000000 rounds × 2 shapes × 2 routes is beyond 1048576 rows"
copy norows 'del d["rows"]'
refused report "$W/norows" "schema: rows: missing or not an array"
copy negative 'd["rows"][4]["result"]["metrics"]["wall_batch"][1]["ns"] = -250'
refused report "$W/negative" "sample_value: row seq 4 "
copy string 'd["rows"][2]["result"]["metrics"]["wall_single"][0]["ns"] = "1200"'
refused report "$W/string" 'wall_single sample 0: ns is "1200", not a finite positive integer'
copy realns 'd["rows"][3]["result"]["metrics"]["wall_single"][2]["ns"] = 1.5e3'
refused report "$W/realns" "ns is 1500, not a finite positive integer"
copy shapes 'd["protocol"]["shapes"] = "64x64x64"'
refused report "$W/shapes" "protocol.shapes"
copy dupkey 'pass'
python3 - "$W/dupkey/results.json" <<'PY'
import sys
p = sys.argv[1]
t = open(p).read()
open(p, "w").write(t.replace('"complete": true', '"complete": true, "complete": false', 1))
PY
refused report "$W/dupkey" "duplicate JSON key"
refused audit "$W/dupkey" "duplicate JSON key"
# The audit finds the same documents wrong (exit 1, a finding), without crashing.
for c in rounds:protocol norows:schema negative:sample_value string:sample_value; do
  limited audit "$W/${c%%:*}"
  rc=$?
  if [ "$rc" -eq 1 ] && grep -q "^REJECT ${c#*:}: " "$W/out"; then ok "audit ${c%%:*}: rejected as ${c#*:}"; else bad "audit ${c%%:*}: exit $rc"; head -3 "$W/out" "$W/err"; fi
done

# Sizes that stay in bounds must not make the work superlinear: 100000 shapes
# (the format's maximum) with no rows took the audit minutes (pairwise label
# comparisons); now a moment, under the same limits.
copy many 'd["protocol"]["shapes"] = [{"label": f"{i+1}x1x1", "m": i+1, "n": 1, "k": 1} for i in range(100000)]; d["rows"] = []; d["order"]["realized"] = []; d["summary"]["rows"] = 0'
limited audit "$W/many"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "^FAIL: .*row_missing 800000" "$W/out"; then ok "100000 shapes: audited in bounded time (800000 rows missing)"; else bad "100000 shapes: audit exit $rc"; tail -n 2 "$W/out" "$W/err"; fi

# ---- hostile files in place of results.json ---------------------------------------
mkdir -p "$W/zero" "$W/fifo" "$W/sparse" "$W/dir"
cp "$D"/tables.json "$D"/report.md "$W/zero/"; ln -s /dev/zero "$W/zero/results.json"
cp "$D"/tables.json "$D"/report.md "$W/fifo/"; mkfifo "$W/fifo/results.json"
cp "$D"/tables.json "$D"/report.md "$W/sparse/"; truncate -s 2G "$W/sparse/results.json"
cp "$D"/tables.json "$D"/report.md "$W/dir/"; mkdir "$W/dir/results.json"
for verb in report audit; do
  refused $verb "$W/zero" "results.json: not a regular file (a character device)"
  refused $verb "$W/fifo" "results.json: not a regular file (a FIFO)"
  refused $verb "$W/sparse" "results.json: 2147483648 bytes, over the limit of 1073741824 bytes"
  refused $verb "$W/dir" "results.json: not a regular file (a directory)"
done
# The audit reads tables.json and report.md through the same reader.
copy tables_fifo 'pass'
rm "$W/tables_fifo/tables.json" && mkfifo "$W/tables_fifo/tables.json"
refused audit "$W/tables_fifo" "tables.json: not a regular file (a FIFO)"
copy report_zero 'pass'
rm "$W/report_zero/report.md" && ln -s /dev/zero "$W/report_zero/report.md"
refused audit "$W/report_zero" "report.md: not a regular file (a character device)"
# Nothing was written next to a refused document.
if [ ! -e "$W/rounds/report.md.tmp" ] && cmp -s "$D/report.md" "$W/rounds/report.md" && [ ! -e "$W/zero/ratios_wall_batch.svg" ]; then
  ok "a refused directory is left as it was"
else
  bad "a refused directory was written to"
fi

echo "test_report_input: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
