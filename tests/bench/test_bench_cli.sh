#!/usr/bin/env bash
# tessera bench / report end to end on the CPU routes, with tiny shapes:
# a preset run, a run that writes every artifact and regenerates the report
# from the raw JSON alone, refusal of an existing --out, crash / timeout /
# invalid-output rows recorded while the run completes, and bad options.
# usage: bash test_bench_cli.sh BUILD_DIR SOURCE_DIR
set -u
B=$1
S=${TSR_SOURCE_DIR:-$2} # the environment wins: a build carried elsewhere
T=$B/tessera
W=$(mktemp -d /tmp/tsr-bench-cli.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# JSON assertions through python3's standard json module.
pyassert() { # pyassert FILE 'python expression over d' description
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2])
sys.exit(0 if ok else 1)
PY
}

TINY=(--samples 2 --sample-ms 2 --warmup-ms 5 --oracle-cache "$W/oracle" --no-progress)
routes=tessera-cpu,openblas

# ---- 1. a run writes raw JSON + report + tables + SVG; order balanced ----------
"$T" bench --shapes 16x16x16,33x17x9 --routes $routes "${TINY[@]}" --out "$W/run1" >"$W/run1.out" 2>"$W/run1.err"
rc=$?
R=$(python3 -c "import json;print(sum(1 for r in json.load(open('$W/run1/results.json'))['routes'] if r['available']))")
check "run exits 0 (rc=$rc)" test $rc -eq 0
for f in results.json report.md tables.json ratios_wall_batch.svg; do
  check "run writes $f" test -s "$W/run1/$f"
done
check "schema, complete, $R routes × 2 shapes × 2R rounds rows" pyassert "$W/run1/results.json" \
  "d['schema']=='tessera-bench/3' and d['complete'] and d['protocol']['rounds']==2*$R and len(d['rows'])==2*$R*2*$R"
check "every row holds its accuracy receipt: strict contract met on random inputs" pyassert "$W/run1/results.json" \
  "d['protocol']['accuracy_inputs']=='random' and all(r['result']['precision']=='strict' and r['result']['accuracy']['contract']=='strict' and r['result']['accuracy']['inputs']=='random' and r['result']['accuracy']['passed'] and r['result']['accuracy']['checked']==r['result']['problem']['m']*r['result']['problem']['n'] and r['result']['accuracy']['worst_bound_ratio']<1 for r in d['rows'])"
check "realized order checked balanced" pyassert "$W/run1/results.json" "d['order']['check']['balanced'] is True and len(d['order']['realized'])==len(d['rows'])"
check "every row ok with two passing complete receipts and integer samples" pyassert "$W/run1/results.json" \
  "all(r['status']=='ok' and len(r['result']['validation'])==2 and all(v['passed'] and v['checked']==v['expected']==r['result']['problem']['m']*r['result']['problem']['n'] for v in r['result']['validation']) and all(isinstance(s['ns'],int) and isinstance(s['calls'],int) and s['calls']>=1 for m in ('wall_batch','wall_single') for s in r['result']['metrics'][m]) and len(r['result']['metrics']['wall_batch'])==2 for r in d['rows'])"
check "dyadic receipts have max error exactly 0" pyassert "$W/run1/results.json" \
  "all(v['max_abs_err']==0 for r in d['rows'] for v in r['result']['validation'])"
check "GPU routes skipped with a reason" pyassert "$W/run1/results.json" \
  "all(r['available'] or (isinstance(r['reason'],str) and r['reason']) for r in d['routes'])"
check "executable hashed" pyassert "$W/run1/results.json" "len(d['artifacts']['executable']['sha256'])==64 and d['artifacts']['executable']['unchanged']"
check "stdout has the tables" grep -q "Median of per-round p50s" "$W/run1.out"
# tables.json agrees with an independent recomputation from the raw samples
check "tables.json recomputable from raw samples" python3 - "$W/run1" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1] + "/results.json"))
t = json.load(open(sys.argv[1] + "/tables.json"))
def p50(row, m):
    return statistics.median(s["ns"] / s["calls"] for s in row["result"]["metrics"][m])
for met in t["metrics"]:
    for c in met["cells"]:
        rows = sorted((r for r in d["rows"] if r["shape"] == c["shape"] and r["route"] == c["route"]), key=lambda r: r["round"])
        want = statistics.median(p50(r, met["metric"]) for r in rows)
        assert abs(c["median_of_p50"] - want) <= 1e-9 * want, (c, want)
    for q in met["ratios"]:
        by = {}
        for r in d["rows"]:
            if r["shape"] == q["shape"] and r["route"] in (q["reference"], q["peer"]):
                by.setdefault(r["round"], {})[r["route"]] = p50(r, met["metric"])
        ratios = [v[q["reference"]] / v[q["peer"]] for v in by.values()]
        assert abs(q["median"] - statistics.median(ratios)) <= 1e-12 * q["median"]
        assert q["min"] == min(ratios) and q["max"] == max(ratios)
        assert q["slower"] == sum(x > 1 for x in ratios)
PY
# report regenerates byte-identically from the raw JSON alone
cp "$W/run1/report.md" "$W/report.before"
cp "$W/run1/tables.json" "$W/tables.before"
rm "$W/run1/report.md" "$W/run1/tables.json" "$W/run1"/ratios_*.svg
"$T" report "$W/run1" >"$W/report.out"
check "tessera report regenerates report.md identically" cmp -s "$W/report.before" "$W/run1/report.md"
check "tessera report regenerates tables.json identically" cmp -s "$W/tables.before" "$W/run1/tables.json"
check "tessera report regenerates the SVG" grep -q "<svg" "$W/run1/ratios_wall_batch.svg"

# tamper evidence (docs/protocol.md): every row chained, the digest printed,
# stored and quoted in report.md; every receipt carries its output's SHA-256
dg=$(sed -n 's/^digest: sha256:\([0-9a-f]\{64\}\)$/\1/p' "$W/run1.out")
check "the run prints its digest" test ${#dg} -eq 64
check "results.json stores the digest and a chain over every row" pyassert "$W/run1/results.json" \
  "d['digest']=='$dg' and d['chain']['rows']==len(d['rows']) and d['chain']['head']==d['rows'][-1]['chain'] and len(set(r['chain'] for r in d['rows']))==len(d['rows'])"
check "report.md quotes the digest" grep -q "^- digest sha256:$dg " "$W/run1/report.md"
check "every receipt carries its output SHA-256; tessera-cpu's before and after agree" pyassert "$W/run1/results.json" \
  "all(len(v['output_sha256'])==64 for r in d['rows'] for v in r['result']['validation']+[r['result']['accuracy']]) and all(r['result']['validation'][0]['output_sha256']==r['result']['validation'][1]['output_sha256'] for r in d['rows'] if r['route']=='tessera-cpu')"
check "every row records its phase times, within its child time" pyassert "$W/run1/results.json" \
  "all(set(r['result']['phase_ns'])=={'plan','inputs','oracle','prepare','call','check','output_sha','timing','teardown'} and all(isinstance(v,int) and v>=0 for v in r['result']['phase_ns'].values()) and sum(r['result']['phase_ns'].values())<=r['result']['child_ns'] for r in d['rows'])"
sanitized=0
grep -Eq '^TSR_(SANITIZE|FUZZ):[A-Z]+=(ON|address|thread)$' "$B/CMakeCache.txt" 2>/dev/null && sanitized=1
if [ "$sanitized" = 0 ]; then  # (a sanitizer build's rows are instrumented: the audit rejects them)
  check "tessera audit --digest verifies the run" bash -c "'$T' audit --digest sha256:$dg '$W/run1' | grep -q '^--digest sha256:$dg: verified'"
fi

# ---- 2. an existing --out is refused: exit 2, nothing touched ------------------
snap() { (cd "$W/run1" && find . -type f -exec sha256sum {} + | sort; ls -lR --time-style=full-iso .; stat -c "%n %y" .); }
snap >"$W/snap.before"
"$T" bench --shapes 16x16x16 --routes $routes "${TINY[@]}" --out "$W/run1" >"$W/refuse.out" 2>"$W/refuse.err"
rc=$?
snap >"$W/snap.after"
check "rerun into an existing dir exits 2 (rc=$rc)" test $rc -eq 2
check "refusal names the directory" grep -q "already exists" "$W/refuse.err"
check "refusal touched nothing" cmp -s "$W/snap.before" "$W/snap.after"

# ---- 3. a crash and a timeout are rows; the run completes ----------------------
start=$(date +%s)
TSR_BENCH_TEST_CRASH=tessera-cpu TSR_BENCH_TEST_HANG=openblas \
  "$T" bench --shapes 16x16x16 --routes $routes "${TINY[@]}" --timeout 2 --out "$W/run3" >"$W/run3.out" 2>"$W/run3.err"
rc=$?
check "crash/timeout run exits 1 (rc=$rc)" test $rc -eq 1
check "crash/timeout run completed" pyassert "$W/run3/results.json" "d['complete'] and len(d['rows'])==2*$R*$R"
check "crashed rows record SIGSEGV and no time" pyassert "$W/run3/results.json" \
  "all(r['status']=='crashed' and r['exit']['signal']==11 and r['result'] is None for r in d['rows'] if r['route']=='tessera-cpu')"
if [ "$R" -ge 2 ]; then
  check "hung rows are timeouts killed near 2 s" pyassert "$W/run3/results.json" \
    "all(r['status']=='timeout' and r['exit']['timed_out'] and 2e9 <= r['exit']['wall_ns'] < 10e9 for r in d['rows'] if r['route']=='openblas')"
fi
check "report lists the failed rows loudly" grep -q "FAILED ROWS" "$W/run3/report.md"
check "stderr names each failure" grep -q "FAILED round 0 16x16x16 tessera-cpu: crashed" "$W/run3.err"
check "cells without a valid round say FAILED" grep -q "FAILED\*\*" "$W/run3/report.md"
if [ "$sanitized" = 0 ]; then  # crash and timeout rows, their logs and stderr tails agree
  check "the crash/timeout run passes the audit (logs cross-checked)" bash -c "'$T' audit '$W/run3' >'$W/a3.out' && grep -Eq ', [1-9][0-9]* row logs,' '$W/a3.out'"
fi

# ---- 4. a wrong output element is a failed row, never a time -------------------
TSR_BENCH_TEST_CORRUPT=tessera-cpu \
  "$T" bench --shapes 8x8x8 --routes tessera-cpu "${TINY[@]}" --out "$W/run4" >"$W/run4.out" 2>"$W/run4.err"
rc=$?
check "invalid output exits 1 (rc=$rc)" test $rc -eq 1
check "invalid rows: failed_validation, receipt failed at element 0, no samples" pyassert "$W/run4/results.json" \
  "all(r['status']=='failed_validation' and r['result']['metrics']=={} and r['result']['validation'][0]['passed'] is False and r['result']['validation'][0]['first_fail']==0 for r in d['rows'])"

# ---- 4b. breaking the precision contract is a failed row, never a time ---------
TSR_BENCH_TEST_INACCURATE=tessera-cpu \
  "$T" bench --shapes 8x8x8 --routes tessera-cpu "${TINY[@]}" --out "$W/run4b" >"$W/run4b.out" 2>"$W/run4b.err"
rc=$?
check "inaccurate output exits 1 (rc=$rc)" test $rc -eq 1
check "inaccurate rows: failed_accuracy, dyadic receipts passed, accuracy receipt failed, no samples" pyassert "$W/run4b/results.json" \
  "all(r['status']=='failed_accuracy' and r['result']['metrics']=={} and all(v['passed'] for v in r['result']['validation']) and r['result']['accuracy']['passed'] is False and r['result']['accuracy']['bound_failed']>=1 for r in d['rows'])"
check "stderr names the broken contract" grep -q "strict contract" "$W/run4b.err"
expect_usage_text() { local needle=$1; shift; "$T" bench "$@" >/dev/null 2>"$W/u.err"; [ $? -eq 2 ] && grep -q -- "$needle" "$W/u.err" && [ "$(wc -l <"$W/u.err")" -eq 1 ]; }
check "usage error: --precision" expect_usage_text "precision: 'half'" --shapes 8x8x8 --precision half
check "usage error: --accuracy dyadic" expect_usage_text "--accuracy: 'dyadic'" --shapes 8x8x8 --accuracy dyadic
check "usage error: --atol with random inputs" expect_usage_text "dyadic inputs only" --shapes 8x8x8 --inputs random --atol 1e-3

# ---- 5. the quick preset's shapes on the CPU routes ----------------------------
"$T" bench --preset quick --routes $routes --samples 1 --sample-ms 2 --warmup-ms 5 --oracle-cache "$W/oracle" --no-progress --out "$W/quick" >"$W/quick.out" 2>"$W/quick.err"
rc=$?
check "quick preset shapes run (rc=$rc)" test $rc -eq 0
check "quick preset: 4 shapes recorded" pyassert "$W/quick/results.json" \
  "[s['label'] for s in d['protocol']['shapes']]==['128x128x61','256x256x256','513x257x129','1024x1024x1024'] and d['protocol']['preset']=='quick'"
if [ "$sanitized" = 0 ]; then  # the audit's restated preset list and quick defaults agree with the bench's
  check "the quick preset run passes the audit (command line checked)" "$T" audit "$W/quick"
fi

# ---- 6. bad input: one line naming the option, exit 2 ---------------------------
expect_usage() { # expect_usage NEEDLE args...
  local needle=$1; shift
  "$T" "$@" >"$W/u.out" 2>"$W/u.err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$needle" "$W/u.err" && [ "$(wc -l <"$W/u.err")" -eq 1 ]; then ok "usage error: $needle"; else bad "usage error $needle (rc=$rc: $(cat "$W/u.err"))"; fi
}
expect_usage "--samples" bench --shapes 8x8x8 --samples 0 --out "$W/x1"
expect_usage "--routes" bench --shapes 8x8x8 --routes tessera-cpu,nope --out "$W/x2"
expect_usage "--shapes" bench --shapes 8x0x8 --out "$W/x3"
expect_usage "--preset" bench --preset huge --out "$W/x4"
expect_usage "--inputs" bench --shapes 8x8x8 --inputs gaussian --out "$W/x5"
expect_usage "no shapes" bench --out "$W/x6"
expect_usage "DIR" report "$W/does-not-exist"
check "bad options created no directory" test ! -e "$W/x1" -a ! -e "$W/x2" -a ! -e "$W/x6"
"$T" bench --help >/dev/null && "$T" report --help >/dev/null && "$T" bench-run --help >/dev/null
check "--help of bench, report, bench-run exit 0" test $? -eq 0

# ---- an order that cannot balance is named before the run, not only after ---------
"$T" bench --shapes 8x8x8 --routes $routes --rounds 1 "${TINY[@]}" --out "$W/unbal" >/dev/null 2>"$W/unbal.err"
check "--rounds 1: warned up front (the plan) and at the end (the realized order)" \
  test "$(grep -c 'cannot balance the route and shape order' "$W/unbal.err")" -eq 1 -a \
  "$(grep -c 'realized order is not balanced' "$W/unbal.err")" -eq 1
check "--rounds 1: the run still completes, its check says so" pyassert "$W/unbal/results.json" \
  "d['complete'] and d['order']['check']['balanced'] is False"

# ---- 7. --max-seconds: the run ends at a round boundary once its order balances --------
"$T" bench --shapes 8x8x8 --routes $routes --rounds 8 --max-seconds 0.001 "${TINY[@]}" --out "$W/dl" >"$W/dl.out" 2>"$W/dl.err"
rc=$?
check "--max-seconds: the run exits 0 (rc=$rc)" test $rc -eq 0
check "--max-seconds: stopped after 2 of 8 rounds (the first balanced prefix), said on stderr" \
  grep -q "stopped after 2 of 8 rounds (--max-seconds 0.001" "$W/dl.err"
check "--max-seconds: the rows of 2 rounds, the stop recorded, the protocol and plan as asked" pyassert "$W/dl/results.json" \
  "d['complete'] and d['stopped']=={'reason':'max-seconds','rounds_run':2,'rounds_planned':8} and d['protocol']['rounds']==8 and d['protocol']['max_seconds']==0.001 and len(d['rows'])==2*$R and {r['round'] for r in d['rows']}=={0,1} and len(d['order']['planned'])==8 and d['order']['check']['rounds']==2 and d['order']['check']['balanced'] is True"
check "--max-seconds: every table cell over the 2 rounds run" python3 - "$W/dl/tables.json" <<'PY'
import json, sys
def cells(x):
    if isinstance(x, dict):
        if "rounds_total" in x: yield x
        for v in x.values(): yield from cells(v)
    elif isinstance(x, list):
        for v in x: yield from cells(v)
c = list(cells(json.load(open(sys.argv[1]))))
sys.exit(0 if c and all(x["rounds_total"] == 2 for x in c) else 1)
PY
"$T" bench --shapes 8x8x8 --routes $routes --rounds 4 --max-seconds 100000 "${TINY[@]}" --out "$W/dl-all" >/dev/null 2>"$W/dl-all.err"
check "--max-seconds far away: every round runs, no stop recorded" pyassert "$W/dl-all/results.json" \
  "'stopped' not in d and len(d['rows'])==4*$R and d['protocol']['max_seconds']==100000"
expect_usage "--max-seconds" bench --shapes 8x8x8 --max-seconds -1 --out "$W/x7"
if [ "$sanitized" = 0 ]; then
  check "--max-seconds: the stopped run passes the audit" "$T" audit "$W/dl"
  # rejects NAME 'python statements over d' 'grep pattern' description: the stopped run's
  # results.json edited so, its audit names the finding
  rejects() {
    rm -rf "$W/$1" && cp -r "$W/dl" "$W/$1" && python3 -c "
import json, sys
p = sys.argv[1]; d = json.load(open(p)); exec(sys.argv[2]); json.dump(d, open(p, 'w'), indent=1)" "$W/$1/results.json" "$2"
    "$T" audit "$W/$1" >"$W/$1.out" 2>&1
    check "--max-seconds: $4" grep -q "$3" "$W/$1.out"
  }
  rejects dl-more "d['stopped']['rounds_run'] = 4" "row_missing: round 2, 8x8x8" \
    "a stop claiming 4 rounds is rejected, naming the missing rows"
  rejects dl-gone "del d['stopped']" "row_missing: round 7, 8x8x8" \
    "the stop record removed, the audit names the rounds not run"
  rejects dl-less "d['stopped']['rounds_run'] = 1" \
    "row_unexpected: row seq [0-9]* (round 1, 8x8x8, [a-z-]*): the round is not part of this run" \
    "a stop claiming 1 round is rejected (rows of round 1 past it)"
  rejects dl-why "d['stopped']['reason'] = 'tired'" "stopped: not a stop by max-seconds" \
    "another stop reason is rejected"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
