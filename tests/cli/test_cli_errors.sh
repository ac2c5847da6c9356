#!/usr/bin/env bash
# Bad input: one clear line naming the field, exit 2, no crash. Plus the
# happy paths' exact outputs. Usage: test_cli_errors.sh BUILD_DIR SOURCE_DIR
set -u
T="$1/tessera"
pass=0 failed=0
ok() { pass=$((pass + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# expect_usage "needle" args...: exit 2, exactly one stderr line containing needle, no stdout.
expect_usage() {
  local needle="$1"; shift
  local out err rc
  out=$("$T" "$@" 2>/tmp/tsr_err.$$); rc=$?
  err=$(cat /tmp/tsr_err.$$)
  if [ $rc -ne 2 ]; then bad "tessera $* → exit $rc (want 2): $err"; return; fi
  if [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then bad "tessera $* → stderr not one line: $err"; return; fi
  case "$err" in *"$needle"*) ;; *) bad "tessera $* → '$err' lacks '$needle'"; return;; esac
  [ -z "$out" ] || { bad "tessera $* printed to stdout: $out"; return; }
  ok
}

expect_usage "M extent 0" gemm --shape 0x5x5
expect_usage "M extent '-1'" gemm --shape -1x2x3
expect_usage "2 extents" gemm --shape 4096x4096
expect_usage "M extent 99999999999 exceeds" gemm --shape 99999999999x2x2
expect_usage "--shape: required" gemm
expect_usage "plan: bm=0" gemm --shape 8x8x8 --plan bm=0 --backend cpu
expect_usage "unknown key 'bq'" gemm --shape 8x8x8 --plan bq=3 --backend cpu
expect_usage "walk: 'rect:0x3'" gemm --shape 8x8x8 --plan walk=rect:0x3 --backend cpu
expect_usage "walk: 'spiral'" plan --shape 8x8x8 --plan walk=spiral --backend cpu
expect_usage "backend: 'tpu'" gemm --shape 8x8x8 --backend tpu
expect_usage "--alpha: 'nan'" gemm --shape 8x8x8 --alpha nan
expect_usage "--inputs: 'noise'" gemm --shape 8x8x8 --inputs noise
expect_usage "--batch: '0'" gemm --shape 8x8x8 --batch 0
expect_usage "unknown option '--frobnicate'" gemm --shape 8x8x8 --frobnicate
expect_usage "--shape: needs a value" plan --shape
expect_usage "walk: 'rect:0x2'" walk --grid 5x7 --walk rect:0x2
expect_usage "--grid: '0x3'" walk --grid 0x3
expect_usage "more than the uint32 launch index" walk --grid 70000x70000 --check
expect_usage "unknown verb 'frob'" frob
expect_usage "needs" gemm --shape 99999x99999x99999 --backend cpu --samples 0

# Happy paths with exact outputs.
pic=$("$T" walk --grid 5x7 --walk rect:2x3)
want='walk rect:2x3 on a 5x7 grid (normalizes to rect:2x3); each cell is its visit ordinal:
 0  1  2  6  7  8 12
 3  4  5  9 10 11 13
14 15 16 20 21 22 26
17 18 19 23 24 25 27
28 29 30 31 32 33 34'
[ "$pic" = "$want" ] && ok || bad "walk picture differs: $pic"
"$T" walk --check >/dev/null && ok || bad "walk --check failed"
for args in "--shape 1x1x1" "--shape 127x193x61 --trans-a --trans-b --beta 0.5 --alpha -2" \
            "--shape 33x17x9 --batch 3 --inputs random"; do
  out=$("$T" gemm $args --backend cpu --samples 1 --sample-ms 1 --warmup-ms 1); rc=$?
  if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q "receipt   PASS"; then ok; else bad "gemm $args → $rc: $out"; fi
done
json=$("$T" gemm --shape 5x6x7 --backend cpu --samples 0 --json)
printf '%s' "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["receipt"]["passed"] and d["receipt"]["checked"]==30 and d["receipt"]["max_abs_err"]==0' \
  && ok || bad "gemm --json: $json"
"$T" --help | grep -q "gemm" && ok || bad "--help"
for v in gemm plan walk; do "$T" $v --help | grep -q "usage: tessera $v" && ok || bad "$v --help"; done
rm -f /tmp/tsr_err.$$
echo "$pass passed, $failed failed"
[ $failed -eq 0 ]
