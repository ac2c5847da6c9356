#!/usr/bin/env bash
# Bad input: one clear line naming the field, exit 2, no crash. Plus the
# happy paths' exact outputs. Usage: test_cli_errors.sh BUILD_DIR SOURCE_DIR
set -u
B="$(cd "$1" && pwd)"
S="$(cd "$2" && pwd)"
T="$B/tessera"
pass=0 failed=0
ok() { pass=$((pass + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

W=$(mktemp -d /tmp/tsr_cli.XXXXXX)
trap 'rm -rf "$W"' EXIT
export TESSERA_TUNE_DB=off XDG_CACHE_HOME=$W/cache
cd "$W" # whatever a verb writes by default (bench: results/) stays in here

# Every refusal must be cheap: each case runs under a wall-clock limit and a
# 4 GiB address-space limit (the failures these cases guard against grew
# toward 96 GiB or ran for minutes).
LIMIT_S=20
LIMIT_KB=4194304
# (a sanitizer build reserves terabytes of shadow address space: there the
# wall-clock limit stays and the address-space limit cannot apply)
grep -Eq '^TSR_(SANITIZE|FUZZ):[A-Z]+=(ON|address|thread)$' "$B/CMakeCache.txt" 2>/dev/null && LIMIT_KB=unlimited
limited() { ( ulimit -v $LIMIT_KB; exec timeout $LIMIT_S "$@" ); }
# Runs that do real work only get the wall-clock limit (a CPU pool of many
# threads reserves more address space than the limit above).
timed() { timeout 120 "$@"; }

# expect_usage "needle" args...: exit 2, exactly one stderr line containing needle, no stdout.
expect_usage() {
  local needle="$1"; shift
  local out err rc
  out=$(limited "$T" "$@" 2>"$W/err"); rc=$?
  err=$(cat "$W/err")
  if [ $rc -ne 2 ]; then bad "tessera $* → exit $rc (want 2): $err"; return; fi
  if [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then bad "tessera $* → stderr not one line: $err"; return; fi
  case "$err" in *"$needle"*) ;; *) bad "tessera $* → '$err' lacks '$needle'"; return;; esac
  [ -z "$out" ] || { bad "tessera $* printed to stdout: $out"; return; }
  ok
}
# expect_usage_fast: the same, and done within 5 s (a refusal before any work).
expect_usage_fast() {
  local t0=$SECONDS
  expect_usage "$@"
  [ $((SECONDS - t0)) -le 5 ] && ok || bad "tessera ${*:2} took $((SECONDS - t0)) s to refuse"
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

# ---- the option tables ------------------------------------------------------
# An option missing its value never swallows the next option; negative
# numbers are values.
expect_usage "--plan: needs a value" gemm --plan --backend cpu
expect_usage "--shape: needs a value" gemm --shape --backend cpu
expect_usage "--seed: needs a value" gemm --shape 8x8x8 --seed
expect_usage "--routes: needs a value" bench --routes --shapes 8x8x8
expect_usage "--unstable-threshold: needs a value" report --unstable-threshold --quiet
# numbers: parsed whole, NaN/Inf refused, the range named; one line each
expect_usage "--rtol: 'nan' is not a finite FP32 number >= 0" gemm --shape 8x8x8 --rtol nan
expect_usage "--atol: 'inf' is not a finite FP32 number >= 0" gemm --shape 8x8x8 --atol inf
expect_usage "--rtol: '-1' is not a finite FP32 number >= 0" gemm --shape 8x8x8 --rtol -1
expect_usage "--alpha: '1e39' is not a finite FP32 number" gemm --shape 8x8x8 --alpha 1e39
expect_usage "--samples: '5x' is not an integer in 0..1000" gemm --shape 8x8x8 --samples 5x
expect_usage "--samples: ' 5' is not an integer in 0..1000" gemm --shape 8x8x8 --samples ' 5'
expect_usage "--max-seconds: 'nan' is not a finite number in (0, 1e+07]" tune --shape 8x8x8 --max-seconds nan
expect_usage "--max-seconds: '0' is not a finite number in (0, 1e+07]" tune --shape 8x8x8 --max-seconds 0
expect_usage "--unstable-threshold: 'inf'" bench --shapes 8x8x8 --unstable-threshold inf
expect_usage "--max-memory: '0' is not a number of GiB in (0, 1048576]" gemm --shape 8x8x8 --max-memory 0
expect_usage "--max-grid: '0' is not an integer in 1..256" walk --check --max-grid 0
expect_usage "--result-fd: '-1' is not an integer in 0..1048576" bench-run --probe tessera-cpu --result-fd -1
expect_usage "--rounds: '3' must be even" tune --shape 8x8x8 --rounds 3
# --batch: 1..65535 in every verb
for v in gemm plan tune; do
  expect_usage "--batch: '65536' is not an integer in 1..65535" $v --shape 8x8x8 --batch 65536
done
expect_usage "--batch: '1048576' is not an integer in 1..65535" bench --shapes 8x8x8 --batch 1048576
expect_usage "--batch: '65536' is not an integer in 1..65535" bench-run --route tessera-cpu --shape 8x8x8 --batch 65536
# choices and families
expect_usage "--preset: 'nope' is not seed, quick, zoo or zoo-quick" bench --preset nope
# --shape of gemm, plan, emit and tune takes the same tokens: a bad one named
expect_usage "--shape '8x8x8:NX': ops ':NX' are not two of N and T" plan --shape 8x8x8:NX --backend cpu
expect_usage "--shape '0*8x8x8': batch '0'" gemm --shape 0*8x8x8 --backend cpu
expect_usage "--shape '2*8x8x8*3': expected [B*]MxNxK[:XY]" tune --shape 2*8x8x8*3 --backend cpu --no-db
expect_usage "--shape '8x8x8:': ops" emit --shape 8x8x8: --backend cuda
# shape tokens [B*]MxNxK[:XY]: a bad one is named, exit 2, before any work
expect_usage_fast "--shapes: '8x8x8:NX': ops ':NX' are not two of N and T" bench --shapes 8x8x8,8x8x8:NX
expect_usage_fast "--shapes: '0*8x8x8': batch '0' is not an integer in [1, 65535]" bench --shapes 0*8x8x8
expect_usage_fast "--shapes: '65536*8x8x8': batch '65536'" bench --shapes 65536*8x8x8
expect_usage_fast "--shapes: 'x*8x8x8': batch 'x'" bench --shapes x*8x8x8
expect_usage_fast "--shapes: '2*8x8x8*3': expected [B*]MxNxK[:XY]" bench --shapes 2*8x8x8*3
expect_usage_fast "--shapes: '8x8x8:NT:TN': expected [B*]MxNxK[:XY]" bench --shapes 8x8x8:NT:TN
expect_usage_fast "--shapes: '8x8x8:': ops ':' are not two of N and T" bench --shapes 8x8x8:
expect_usage_fast "--shapes: '2*8x8': shape: '8x8' has 2 extents" bench --shapes 2*8x8
expect_usage_fast "--shapes: '8x8x8:TN' is the problem of '8x8x8'" bench --shapes 8x8x8,8x8x8:TN --trans-a
expect_usage_fast "--shapes: '1*8x8x8:NN' is the problem of '8x8x8'" bench --shapes 8x8x8,1*8x8x8:NN
expect_usage_fast "--shapes: '2*8x8x8' is named twice" bench --shapes 2*8x8x8,2*8x8x8
expect_usage_fast "--preset zoo: its shapes carry their own batch and ops" bench --preset zoo --trans-a
expect_usage_fast "--preset zoo-quick: its shapes carry their own batch and ops" bench --preset zoo-quick --batch 1
expect_usage "--shape: '2*8x8x8:NT' disagrees with --batch/--trans-a/--trans-b" bench-run --route tessera-cpu --shape 2*8x8x8:NT --batch 2
expect_usage "--shape: '8x8x8:Q'" bench-run --route tessera-cpu --shape 8x8x8:Q
# the memory refusal takes each shape's own batch
expect_usage_fast "tessera bench: 65535*4096x4096x4096 batch 65535: needs about" \
  bench --shapes 8x8x8,65535*4096x4096x4096 --routes tessera-cpu --out "$W/b4"
[ ! -e "$W/b4" ] && ok || bad "a refused bench created its --out"
expect_usage "--preset: 'nope' is not seed" tune --preset nope
expect_usage "--torch-process: 'spawn' is not fork or exec" bench --shapes 8x8x8 --torch-process spawn
expect_usage "--accuracy: 'dyadic' is not random, normal, wide or off" gemm --shape 8x8x8 --accuracy dyadic
expect_usage "--accuracy: 'x' is not random, normal, wide or off" tune --shape 8x8x8 --accuracy x
expect_usage "precision: 'half'" gemm --shape 8x8x8 --precision half
expect_usage "--out: needs a non-empty value" bench --shapes 8x8x8 --out ''
# lists: no empty item, the position named
expect_usage "--shapes: item 1 of ',8x8x8' is empty" bench --shapes ,8x8x8
expect_usage "--shapes: item 2 of '8x8x8,' is empty" bench --shapes 8x8x8,
expect_usage "--shapes: item 2 of '8x8x8,,9x9x9' is empty" bench --shapes 8x8x8,,9x9x9
expect_usage "--routes: item 2 of 'tessera-cpu,' is empty" bench --routes tessera-cpu, --shapes 8x8x8
expect_usage "--routes: 'tessera-cpu' is named twice" bench --routes tessera-cpu,tessera-cpu --shapes 8x8x8
# unknown options and stray arguments, in every verb
for v in gemm plan emit walk tune bench bench-run report audit; do
  expect_usage "tessera $v: unknown option '--frobnicate' (see --help)" $v --frobnicate
done
expect_usage "unexpected argument 'stray'" plan --shape 8x8x8 stray
expect_usage "unexpected argument 'b' (one DIR only)" report a b
# echoed text is escaped: a message is always one line
expect_usage "'8x8\\nx8' has 2 extents" gemm --shape $'8x8\nx8'
expect_usage "unknown option '--x\\ty\\x01'" gemm $'--x\ty\x01'
expect_usage "unknown verb 'a\\nb'" $'a\nb'
expect_usage "--shapes: '9\\rx9x9'" bench --shapes $'8x8x8,9\rx9x9'

# ---- memory and time: refused before any work, cheaply -------------------------
expect_usage_fast "--shape 65536x65536x65536 batch 1: needs about" tune --shape 65536x65536x65536 --backend cpu --max-seconds 1 --no-db
expect_usage_fast "GiB (80% of physical memory; --max-memory GIB sets it)" tune --shape 65536x65536x65536 --backend cpu --no-db
expect_usage_fast "--shape 8192x8192x8192 batch 1: inputs and FP64 oracle alone take about" \
  tune --shape 8192x8192x8192 --backend cpu --max-seconds 1 --no-db --oracle-cache "$W/oc0"
expect_usage_fast "more than --max-seconds 1" tune --shape 8192x8192x8192 --backend cpu --max-seconds 1 --no-db
expect_usage_fast "more than the limit of 1.00 MiB (--max-memory)" tune --shape 256x256x256 --backend cpu --max-memory 0.0009765625 --no-db
expect_usage_fast "--shape 65536x65536x65536 batch 1: needs about" gemm --shape 65536x65536x65536 --backend cpu
expect_usage_fast "(--max-memory)" gemm --shape 256x256x256 --backend cpu --max-memory 0.0001
expect_usage_fast "tessera bench: 65536x65536x65536 batch 1: needs about" \
  bench --shapes 8x8x8,65536x65536x65536 --routes tessera-cpu --out "$W/b1"
expect_usage_fast "4096x4096x4096 batch 65535: needs about" bench --shapes 4096x4096x4096 --batch 65535 --out "$W/b2"
expect_usage_fast "(--max-memory)" bench --shapes 64x64x64 --routes tessera-cpu --max-memory 0.00001 --out "$W/b3"
[ ! -e "$W/b1" ] && [ ! -e "$W/b2" ] && [ ! -e "$W/b3" ] && ok || bad "a refused bench created its --out"

# A cached oracle costs nothing. 32x512x512 is the same estimate on any
# machine (32 rows: a one-thread CPU oracle; tensors under 4e6 elements: a
# one-thread fill): inputs 0.0294 s (2 workloads: 278528 elements at 2e7/s,
# 12 B x 16384 hashed at 2.5e8 B/s) plus 0.0168 s per uncached oracle. A
# 0.04 s budget passes with both oracles cached and refuses with either
# missing.
oc=$W/oc1
tune_small() { timed "$T" tune --shape 32x512x512 --backend cpu --max-candidates 1 --no-db --quiet --in-process "$@"; }
tune_small --max-seconds 60 --oracle-cache "$oc" >"$W/t1" 2>&1 && ok || bad "tune filling the oracle cache: $(cat "$W/t1")"
[ "$(ls "$oc" | grep -c '\.f64$')" = 2 ] && ok || bad "oracle cache holds $(ls "$oc") (want 2 entries)"
tune_small --max-seconds 0.04 --oracle-cache "$oc" >"$W/t2" 2>&1 && grep -q "^decision " "$W/t2" && ok ||
  bad "tune with cached oracles refused: $(cat "$W/t2")"
expect_usage_fast "0.0336 s for 2 uncached oracle(s)" tune --shape 32x512x512 --backend cpu --max-candidates 1 \
  --max-seconds 0.04 --no-db --oracle-cache "$W/oc2" --quiet --in-process
cp -r "$oc" "$W/oc3" && rm "$(ls "$W"/oc3/*.f64 | head -1)"
expect_usage_fast "0.0168 s for 1 uncached oracle(s)" tune --shape 32x512x512 --backend cpu --max-candidates 1 \
  --max-seconds 0.04 --no-db --oracle-cache "$W/oc3" --quiet --in-process
# a damaged entry (wrong size) is no cache hit
cp -r "$oc" "$W/oc4" && for f in "$W"/oc4/*.f64; do printf 'x' >>"$f"; done
expect_usage_fast "0.0336 s for 2 uncached oracle(s)" tune --shape 32x512x512 --backend cpu --max-candidates 1 \
  --max-seconds 0.04 --no-db --oracle-cache "$W/oc4" --quiet --in-process

# ---- happy paths: every table parses its options --------------------------------
json=$("$T" gemm --shape 33x17x9 --backend cpu --alpha -2 --beta 0.5 --batch 3 --trans-a --trans-b \
  --precision strict --accuracy off --seed 7 --samples 1 --sample-ms 1 --warmup-ms 1 --max-memory 1 \
  --atol 0 --rtol 0 --plan bm=48 --json)
printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin); p = d["problem"]
assert p["alpha"] == -2 and p["beta"] == 0.5 and p["batch"] == 3 and p["op_a"] == "T" and p["op_b"] == "T", p
assert p["precision"] == "strict" and "accuracy" not in d and d["receipt"]["passed"], d
assert d["receipt"]["checked"] == 33 * 17 * 3 and d["timing"]["samples"] == 1 and "bm=48," in d["plan"], d' \
  && ok || bad "gemm with every option: $json"
out=$("$T" gemm --shape 16x16x16 --backend cpu --inputs random --seed 3 --samples 0) &&
  printf '%s' "$out" | grep -q "random inputs" && ok || bad "gemm --inputs random: $out"
json=$("$T" plan --shape 64x64x64 --backend cpu --plan bm=48 --batch 2 --alpha -1 --json) &&
  printf '%s' "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert "bm=48," in d["plan"] and d["grid"][2]==2' \
  && ok || bad "plan --json: $json"
# a whole plan text (as tessera prints it) is that plan: 4096^3's strict default carries
# krel=1, which an LDGSTS producer refuses; the text leaves krel out, so it is unset
whole="bm=64,bn=128,bk=16,wm=16,wn=128,tm=8,tn=8,stages=2,vec=4,a=staged,b=staged,pad=4,walk=linear,splitk=1,threads=0,isa=auto,mma=ffma,acc=step,minblocks=3,pack=none,split=producer,kloop=2,forder=1"
json=$("$T" plan --shape 4096x4096x4096 --backend cuda --precision strict --plan "$whole" --json) &&
  printf '%s' "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["plan"] == sys.argv[1], d["plan"]' "$whole" \
  && ok || bad "plan --plan WHOLE: $json"
# plan --explain: the lookup's steps, in the text and in the JSON
out=$(TESSERA_TUNE_DB=off "$T" plan --shape 64x64x64 --backend cpu --explain) &&
  printf '%s\n' "$out" | grep -qx "  tuning database off (TESSERA_TUNE_DB=off)" && ok || bad "plan --explain: $out"
json=$(TESSERA_TUNE_DB="$W/none.db" "$T" plan --shape 64x64x64 --backend cpu --explain --json) &&
  printf '%s' "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["lookup_explain"] == "  no tuning database at %s\n" % sys.argv[1], d' "$W/none.db" \
  && ok || bad "plan --explain --json: $json"
sha=$("$T" emit --shape 64x64x64 --plan bm=64 --sha256 2>/dev/null)
[ ${#sha} = 64 ] && "$T" emit --shape 64x64x64 --plan bm=64 --out "$W/k.cu" 2>/dev/null &&
  [ "$(sha256sum <"$W/k.cu" | cut -c1-64)" = "$sha" ] && ok || bad "emit --sha256 / --out: $sha"
json=$("$T" walk --check --max-grid 3 --max-req 2 --json) &&
  printf '%s' "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["failures"]==0 and d["combinations"]>0' \
  && ok || bad "walk --check --json: $json"
json=$(timed "$T" tune --shape 32x32x32 --backend cpu --batch 2 --alpha -2 --beta 0.5 --trans-a \
  --precision strict --max-candidates 2 --max-seconds 30 --samples 5 --sample-ms 1 --warmup-ms 1 \
  --rounds 2 --spill-limit 0 --no-db --oracle-cache "$W/oc5" --in-process --accuracy normal \
  --max-memory 1 --quiet --json)
printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin); p = d["problem"]
assert p["batch"] == 2 and p["alpha"] == -2 and p["beta"] == 0.5 and p["op_a"] == "T" and p["precision"] == "strict", p
assert d["accuracy_inputs"] == "normal" and d["budget"]["max_candidates"] == 2 and d["budget"]["max_seconds"] == 30, d' \
  && ok || bad "tune with every option: $json"
timed "$T" bench --shapes 8x8x8 --routes tessera-cpu --batch 2 --alpha -2 --beta 0.5 --trans-a --trans-b \
  --precision strict --accuracy off --seed 3 --threads 1 --rounds 2 --timeout 60 --samples 1 \
  --sample-ms 1 --warmup-ms 1 --unstable-threshold 0.25 --max-memory 1 --inputs dyadic --atol 0 \
  --rtol 0 --oracle-cache none --torch-process exec --no-progress --out "$W/bench" >"$W/bench.out" 2>&1 \
  && python3 - "$W/bench/results.json" <<'PY' && ok || bad "bench with every option: $(cat "$W/bench.out")"
import json, sys
d = json.load(open(sys.argv[1])); p = d["protocol"]
assert p["batch"] == 2 and p["alpha"] == -2 and p["beta"] == 0.5 and p["op_a"] == "T" and p["op_b"] == "T", p
assert p["precision"] == "strict" and p["accuracy_inputs"] is None and p["seed"] == 3 and p["threads"] == 1, p
assert p["rounds"] == 2 and p["timeout_s"] == 60 and p["samples"] == 1 and p["unstable_threshold"] == 0.25, p
assert p["oracle_cache"] is None and len(d["rows"]) == 2 and all(r["status"] == "ok" for r in d["rows"]), d["rows"]
PY
"$T" report "$W/bench" --unstable-threshold 0.5 --quiet >"$W/rep.out" 2>&1 && [ ! -s "$W/rep.out" ] &&
  grep -q "0.5" "$W/bench/report.md" && ok || bad "report --unstable-threshold --quiet: $(cat "$W/rep.out")"
row=$("$T" bench-run --route tessera-cpu --shape 8x8x8 --batch 2 --alpha -2 --beta 0.5 --trans-a \
  --precision strict --accuracy normal --seed 5 --samples 1 --sample-ms 1 --warmup-ms 1 --threads 1 \
  --atol 0 --rtol 0 --oracle-cache none --work-dir "$W" --result-fd 1)
printf '%s' "$row" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["status"] == "ok" and d["problem"]["batch"] == 2 and d["accuracy"]["inputs"] == "normal", d' \
  && ok || bad "bench-run with every option: $row"

# ---- --help: generated from the table, lists every option ------------------------
# Each option --help lists is one the parser knows (never "unknown option"),
# and each verb's help names the options the verb is documented to take.
for v in gemm plan emit walk tune bench bench-run report audit; do
  "$T" $v --help >"$W/help" 2>&1 && grep -q "^usage: tessera $v" "$W/help" || { bad "$v --help"; continue; }
  for o in $(grep -oE '^  --[a-z0-9-]+' "$W/help"); do
    limited "$T" $v $o >/dev/null 2>"$W/herr" </dev/null
    grep -q "unknown option" "$W/herr" && bad "$v --help lists $o but the parser refuses it"
  done
  ok
done
want_gemm="--shape --batch --trans-a --trans-b --alpha --beta --plan --backend --precision --inputs --accuracy --seed --atol --rtol --samples --sample-ms --warmup-ms --max-memory --json"
want_tune="--shape --batch --trans-a --trans-b --alpha --beta --plan --backend --precision --preset --max-candidates --max-seconds --max-memory --samples --sample-ms --warmup-ms --rounds --spill-limit --db --no-db --oracle-cache --in-process --out --json --quiet --show --accuracy"
want_bench="--routes --preset --shapes --samples --sample-ms --warmup-ms --rounds --timeout --inputs --seed --precision --accuracy --atol --rtol --threads --batch --trans-a --trans-b --alpha --beta --unstable-threshold --max-memory --out --oracle-cache --torch-script --torch-process --no-progress"
want_bench_run="--probe --route --oracle-only --shape --batch --trans-a --trans-b --alpha --beta --inputs --seed --precision --accuracy --samples --sample-ms --warmup-ms --threads --atol --rtol --oracle-cache --work-dir --torch-script --torch-zygote --result-fd"
want_plan="--shape --batch --trans-a --trans-b --alpha --beta --plan --backend --precision --json"
want_emit="$want_plan --out --sha256"; want_emit=${want_emit/ --json/}
want_walk="--grid --walk --check --max-grid --max-req --json"
want_report="--unstable-threshold --quiet"
want_audit="--json --current-artifacts --digest --self-test"
want_zoo="--seed --quick --class --held-back --format --summarize --metric --route --peer"
for v in gemm tune bench bench-run plan emit walk report audit zoo; do
  var=want_${v/-/_}
  "$T" $v --help >"$W/help"
  for o in ${!var}; do grep -qE "^  $o( |\$)" "$W/help" || bad "$v --help does not list $o"; done
  ok
done
"$T" tune --help | grep -q -- "--replay-child" && bad "tune --help lists the internal --replay-child" || ok

# zoo: bad input is one line; its bench lines are accepted by bench's parser
expect_usage "--class: 'nope'" zoo --class nope
expect_usage "--format" zoo --format csv
expect_usage "--seed" zoo --seed -1
"$T" zoo --quick --format bench >"$W/zoo.txt" && [ "$(wc -l <"$W/zoo.txt")" -eq 1 ] && ok || bad "zoo --format bench"
# its one line names the preset's shapes, in the preset's order
[ "$(sed 's/^tessera bench --shapes \([^ ]*\).*/\1/' "$W/zoo.txt")" = \
  "$("$T" zoo --quick --format json | python3 -c 'import json,sys; print(",".join(s["label"] for s in json.load(sys.stdin)["shapes"]))')" ] \
  && ok || bad "zoo --format bench is not the zoo-quick list"
# the zoo presets pass the parser and are refused only for memory
for p in zoo zoo-quick; do
  expect_usage_fast "(--max-memory)" bench --preset $p --routes tessera-cpu --max-memory 0.000001 --out "$W/bz-$p"
done
while read -r line; do
  args=${line%%#*}
  # the line's options with a refusing memory limit: bench must get past its
  # parser (shapes, transposes, batch) and refuse only for memory
  out=$(limited "$T" ${args#tessera } --max-memory 0.000001 --routes tessera-cpu 2>&1 >/dev/null); rc=$?
  case "$out" in *"host memory"*) ok ;; *) bad "zoo line '$line' → exit $rc: $out" ;; esac
done <"$W/zoo.txt"

# zoo --summarize: per-class standings recomputed from results.json; python
# recomputes each class's geometric mean from the committed tables.json
# (which `tessera audit` verifies) and the zoo's own JSON listing
ZQ="$S/docs/results/2026-11-30-cpu-zoo-quick"
expect_usage "--summarize: no DIR" zoo --summarize
expect_usage "read only with --summarize" zoo "$ZQ/run1"
expect_usage "go with --summarize" zoo --metric wall_batch
expect_usage "has no metric gpu_batch" zoo --summarize --metric gpu_batch "$ZQ/run1"
expect_usage "results.json" zoo --summarize "$W"
"$T" zoo --format json >"$W/zoo.json"
if "$T" zoo --summarize "$ZQ/run1" "$ZQ/run2" "$ZQ/run3" "$ZQ/run4" >"$W/summ.txt"; then
  python3 - "$W/zoo.json" "$W/summ.txt" "$ZQ"/run1 "$ZQ"/run2 "$ZQ"/run3 "$ZQ"/run4 <<'PY' && ok || bad "zoo --summarize geomeans"
import json, math, sys
zoo = json.load(open(sys.argv[1]))["shapes"]
got = {}
for line in open(sys.argv[2]):
    f = [x.strip() for x in line.split("|")]
    if len(f) == 9 and f[2].isdigit():
        got[f[1]] = (int(f[2]), float(f[3]))
ratios = {}
for d in sys.argv[3:]:
    p = json.load(open(d + "/results.json"))["protocol"]
    t = json.load(open(d + "/tables.json"))
    m = [x for x in t["metrics"] if x["metric"] == "wall_batch"][0]
    for sh in p["shapes"]:
        z = [z for z in zoo if (z["m"], z["n"], z["k"], z["batch"], z["op_a"], z["op_b"]) ==
             (sh["m"], sh["n"], sh["k"], p["batch"], p["op_a"], p["op_b"])]
        r = [r for r in m["ratios"] if r["shape"] == sh["label"] and r["reference"] == "tessera-cpu"
             and r["peer"] == "openblas"][0]
        ratios.setdefault(z[0]["class"], []).append(r["median"])
assert len(ratios) == 8 and len(got) == 8, (ratios.keys(), got)
for c, rs in ratios.items():
    gm = math.exp(sum(map(math.log, rs)) / len(rs))
    assert got[c][0] == len(rs) and abs(got[c][1] - gm) < 6e-4, (c, got[c], gm)
PY
else
  bad "zoo --summarize exit $?"
fi

echo "$pass passed, $failed failed"
[ $failed -eq 0 ]
