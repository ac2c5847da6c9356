#!/usr/bin/env bash
# tessera audit end to end: the committed CPU results directory passes the
# audit and its self-test; unusable input exits 2 with one line; direct
# corruptions through the CLI are rejected naming the row or field; fresh
# runs: failed rows reported are fine, an instrumented run is rejected, and
# --current-artifacts notices a changed executable.
# usage: bash test_audit.sh BUILD_DIR SOURCE_DIR
set -u
B=$1
S=${TSR_SOURCE_DIR:-$2} # the environment wins: a build carried elsewhere
T=$B/tessera
D=$S/docs/results/2026-11-29-cpu-tiny
W=$(mktemp -d /tmp/tsr-audit.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
# expect_rc RC description -- command...: exit code and captured output in $W/out, $W/err
expect_rc() {
  local want=$1 what=$2; shift 2
  "$@" >"$W/out" 2>"$W/err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then ok "$what (exit $rc)"; else bad "$what: exit $rc, expected $want"; cat "$W/out" "$W/err" | head -20; fi
}
one_line_err() { [ "$(wc -l <"$W/err")" -eq 1 ] && grep -q "^tessera audit: " "$W/err"; }
# corrupt SRC_DIR DST_DIR 'python statements over d (results.json)'
corrupt() {
  rm -rf "$2" && cp -r "$1" "$2" && python3 - "$2/results.json" "$3" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
exec(sys.argv[2])
json.dump(d, open(p, "w"), indent=1)
PY
}
sanitized=0
grep -Eq '^TSR_(SANITIZE|FUZZ):[A-Z]+=(ON|address|thread)$' "$B/CMakeCache.txt" 2>/dev/null && sanitized=1

# ---- the committed directory ------------------------------------------------
expect_rc 0 "committed CPU results pass the audit" "$T" audit "$D"
check "audit prints PASS and its coverage" grep -q "^PASS$" "$W/out"
check "coverage: 16 rows, 96 samples, 8 cells, 4 ratios" grep -q "16 rows (16 ok, 0 failed).*96 samples.*8 table cells, 4 paired ratios" "$W/out"
expect_rc 0 "--json verdict" "$T" audit --json "$D"
check "--json verdict pass" python3 -c "import json,sys; d=json.load(open('$W/out')); sys.exit(0 if d['verdict']=='pass' and d['findings']==[] and d['checked']['rows']==16 else 1)"
# The committed H200 seed run (GPU routes, 4 metrics) audits and self-tests too.
H=$S/docs/results/2026-11-29-h200-seed
if [ -d "$H" ]; then
  expect_rc 0 "audit of the committed H200 seed directory" "$T" audit "$H"
  expect_rc 0 "self-test of the committed H200 seed directory" "$T" audit --self-test "$H"
  check "H200 self-test: pristine passes" grep -q "^self-test: pristine copy passes (224 rows" "$W/out"
fi
expect_rc 0 "self-test of the committed directory" "$T" audit --self-test "$D"
check "self-test: pristine passes" grep -q "^self-test: pristine copy passes" "$W/out"
for c in missing_row:row_missing wrong_order:order_design invalid_output:validation nan_time:sample_value \
  missing_source_hash:artifact_hash wrong_element_count:element_count instrumented_control:instrumented \
  changed_artifact:artifact_changed table_value:table_mismatch report_value:report_mismatch \
  calls_doubled:calibration samples_exceed_child:child_time sequence_gap:sequence \
  finish_before_start:timestamps other_device:row_device other_threads:row_threads argv_route:row_argv \
  oracle_key:row_oracle plan_changed:row_plan receipt_tolerance:receipt_tolerance \
  nan_error_passed:receipt_logic revived_crash_log:log dropped_shape:command_line oracle_list:oracle_list \
  svg_bar_moved:svg_mismatch report_prose:report_mismatch threshold_regenerated:table_mismatch; do
  name=${c%%:*} reason=${c#*:}
  check "self-test rejects $name with $reason" grep -Eq "^self-test: $name +rejected: $reason: " "$W/out"
done
check "self-test: rejections name the row" grep -Eq "^self-test: missing_row +rejected: row_missing: round [0-9]+, [0-9x]+, (tessera-cpu|openblas): no row" "$W/out"
check "self-test: NaN names the row and sample" grep -Eq "nan_time +rejected: sample_value: row seq [0-9]+ \(round [0-9]+, [0-9x]+, [a-z-]+\): wall_(batch|single) sample 0: ns is \"nan\"" "$W/out"
check "self-test: artifact names the field" grep -Eq "changed_artifact +rejected: artifact_changed: artifacts.executable: " "$W/out"
check "self-test: PASS" grep -q "^self-test: PASS$" "$W/out"
check "self-test: the tamper-evidence probes are skipped for tessera-bench/1, saying so" bash -c "[ \$(grep -c 'skipped: tessera-bench/1 predates tamper evidence' '$W/out') -eq 3 ]"
# (a private TMPDIR: other tests' self-tests may run at the same time)
mkdir -p "$W/st-tmp"
expect_rc 0 "self-test --json" env TMPDIR="$W/st-tmp" "$T" audit --self-test --json "$D"
check "self-test --json: pristine + 27 cases, all rejected" python3 -c "
import json,sys; d=json.load(open('$W/out')); c=d['cases']
sys.exit(0 if d['self_test']=='pass' and len(c)==28 and all(x.get('rejected') for x in c[1:]) and c[0]['passed'] else 1)"
check "the self-test leaves no temporary copies" bash -c "[ -z \"\$(ls -A '$W/st-tmp')\" ]"

# ---- unusable input: exit 2, one line ------------------------------------------
expect_rc 2 "missing directory" "$T" audit "$W/nope"
check "missing directory: one line" one_line_err
mkdir -p "$W/trunc" && cp "$D"/*.json "$D"/*.md "$W/trunc/" && head -c 2000 "$D/results.json" >"$W/trunc/results.json"
expect_rc 2 "truncated results.json" "$T" audit "$W/trunc"
check "truncated: one line naming results.json" bash -c "one() { :; }; [ \$(wc -l <'$W/err') -eq 1 ] && grep -q 'results.json: truncated or not JSON' '$W/err'"
mkdir -p "$W/nonjson" && cp "$D"/*.json "$D"/*.md "$W/nonjson/" && echo 'not json at all' >"$W/nonjson/tables.json"
expect_rc 2 "non-JSON tables.json" "$T" audit "$W/nonjson"
check "non-JSON: one line naming tables.json" grep -q "tables.json: truncated or not JSON" "$W/err"
mkdir -p "$W/noreport" && cp "$D"/results.json "$D"/tables.json "$W/noreport/"
expect_rc 2 "missing report.md" "$T" audit "$W/noreport"
check "missing report.md: one line" one_line_err
mkdir -p "$W/other" && cp "$D"/*.json "$D"/*.md "$W/other/" && echo '{"schema": "something-else/3"}' >"$W/other/results.json"
expect_rc 2 "another schema" "$T" audit "$W/other"
expect_rc 2 "truncated input in --self-test" "$T" audit --self-test "$W/trunc"
expect_rc 2 "unknown option" "$T" audit --frobnicate "$D"
expect_rc 2 "no DIR" "$T" audit
expect_rc 0 "--help" "$T" audit --help
check "--help names the exit codes" grep -q "exit: 0 pass, 1 audit failure" "$W/out"

# ---- direct corruptions through the CLI -------------------------------------------
corrupt "$D" "$W/c1" 'd["rows"][3]["result"]["metrics"]["wall_single"].pop()'
expect_rc 1 "a sample removed" "$T" audit "$W/c1"
check "sample_count names the row and metric" grep -Eq "^REJECT sample_count: row seq 3 \(round 0, [0-9x]+, [a-z-]+\): wall_single: 2 samples, the protocol declares 3" "$W/out"
corrupt "$D" "$W/c2" 'd["rows"][5]["result"]["metrics"]["wall_batch"][1]["calls"] = 0'
expect_rc 1 "a zero call count" "$T" audit "$W/c2"
check "call_count names the row" grep -Eq "^REJECT call_count: row seq 5 .*wall_batch sample 1" "$W/out"
corrupt "$D" "$W/c3" 'd["rows"].append(dict(d["rows"][0])); d["order"]["realized"].append(dict(d["order"]["realized"][0]))'
expect_rc 1 "a duplicated row" "$T" audit "$W/c3"
check "row_duplicate reported" grep -q "^REJECT row_duplicate: row seq 0 " "$W/out"
corrupt "$D" "$W/c4" 'd["protocol"]["samples"] = 0'
expect_rc 1 "samples = 0 in the protocol" "$T" audit "$W/c4"
check "protocol field named" grep -q "^REJECT protocol: protocol.samples: " "$W/out"
corrupt "$D" "$W/c5" 'r=d["rows"][6]; r["status"]="failed_validation"; r["detail"]="x"; r["result"]["metrics"]={}; d["summary"]["failed_rows"]=1'
expect_rc 1 "a failed row the report does not list" "$T" audit "$W/c5"
check "failure_unreported names the row" grep -q "^REJECT failure_unreported: row seq 6 " "$W/out"
corrupt "$D" "$W/c6" 'd["rows"][2]["result"]["problem"]["m"] = 95'
expect_rc 1 "a row's M differs from its shape" "$T" audit "$W/c6"
check "element_count names the row" grep -q "^REJECT element_count: row seq 2 .*problem M×N×batch 95×" "$W/out"
corrupt "$D" "$W/c7" 'd["order"]["check"]["pair_counts"][0][0][1] = 3'
expect_rc 1 "a recorded pair count differs from the realized order" "$T" audit "$W/c7"
check "order_record names the field" grep -q "^REJECT order_record: order.check.pair_counts: " "$W/out"
corrupt "$D" "$W/c8" 'del d["rows"][0]["result"]["instrumentation"]'
expect_rc 1 "a row without an instrumentation record" "$T" audit "$W/c8"
check "instrumentation_unrecorded names the row" grep -q "^REJECT instrumentation_unrecorded: row seq 0 " "$W/out"
expect_rc 1 "--json of a failing audit" "$T" audit --json "$W/c8"
check "--json lists the finding" python3 -c "
import json,sys; d=json.load(open('$W/out')); f=d['findings']
sys.exit(0 if d['verdict']=='fail' and f[0]['reason']=='instrumentation_unrecorded' and f[0]['where'].startswith('row seq 0') else 1)"

# ---- fresh runs --------------------------------------------------------------------
TINY=(--shapes 32x32x32,40x24x16 --routes tessera-cpu,openblas --samples 2 --sample-ms 1 --warmup-ms 2 --oracle-cache none --no-progress)
TSR_BENCH_TEST_CORRUPT=openblas "$T" bench "${TINY[@]}" --out "$W/failrun" >/dev/null 2>&1
if [ "$sanitized" = 1 ]; then
  expect_rc 1 "sanitizer build: a fresh run is rejected as instrumented" "$T" audit "$W/failrun"
  check "instrumented: build sanitizer marker" grep -Eq "^REJECT instrumented: .*build (Address|Thread)Sanitizer" "$W/out"
else
  expect_rc 0 "a run with reported failed rows passes the audit" "$T" audit "$W/failrun"
  check "its failed rows are counted" grep -q "16 rows (8 ok, 8 failed)" "$W/out"
  expect_rc 0 "self-test of a run with failed rows" "$T" audit --self-test "$W/failrun"
fi
CUDA_INJECTION64_PATH=/opt/nsight/libToolsInjection64.so "$T" bench "${TINY[@]}" --out "$W/profiled" >/dev/null 2>&1
expect_rc 1 "a run under CUDA_INJECTION64_PATH is rejected" "$T" audit "$W/profiled"
check "instrumented names the row and the marker" grep -q "^REJECT instrumented: row seq 0 .*env CUDA_INJECTION64_PATH=/opt/nsight/libToolsInjection64.so" "$W/out"

mkdir -p "$W/bin" && cp "$T" "$W/bin/tessera" && sync  # (the H200 host reported "Text file busy" without the sync)
"$W/bin/tessera" bench "${TINY[@]}" --out "$W/cur" >/dev/null 2>&1
if [ "$sanitized" = 1 ]; then want=1; else want=0; fi
expect_rc $want "--current-artifacts on a fresh run from a copied executable" "$W/bin/tessera" audit --current-artifacts "$W/cur"
check "--current-artifacts hashed the files" grep -Eq "artifacts hashed on disk \([1-9][0-9]* files" "$W/out"
# a changed executable: a new file renamed over it (appending in place fails with
# "Text file busy" while any process still maps it)
cp "$W/bin/tessera" "$W/bin/tessera.new" && printf 'x' >>"$W/bin/tessera.new" && mv -f "$W/bin/tessera.new" "$W/bin/tessera"
expect_rc 1 "--current-artifacts after the executable changed" "$T" audit --current-artifacts "$W/cur"
check "artifact_changed names the executable" grep -q "^REJECT artifact_changed: artifacts.executable: $W/bin/tessera has sha256" "$W/out"
expect_rc 1 "self-test --current-artifacts on a changed executable: the pristine copy fails" "$T" audit --self-test --current-artifacts "$W/cur"

# ---- a GPU-shaped document (synthetic, built here from the CPU run) ------------------
# No GPU on CI: rename the CPU routes to tessera-gpu/cublas, give every row the
# four GPU metrics and tessera-gpu rows the real plan and generated-source
# SHA-256 of this build (tessera plan / emit), let `tessera report` write the
# tables; the audit must pass it, regenerate both sources with
# --current-artifacts, and reject a missing source hash as source_hash.
G=$W/gpu
mkdir -p "$G"
plan=$("$T" plan --backend cuda --shape 64x64x64 2>/dev/null | awk '$1 == "plan" {print $2}')
sha1=$("$T" emit --backend cuda --shape 64x64x64 --sha256 2>/dev/null | tail -1)
# both rows record the 64^3 plan (the default plan may differ per shape, and
# per machine): the audit regenerates each row's source from its own record
sha2=$("$T" emit --backend cuda --shape 96x80x72 --plan "$plan" --sha256 2>/dev/null | tail -1)
python3 - "$D/results.json" "$G/results.json" "$plan" "$sha1" "$sha2" "$S/src/bench/routes/torch_route.py" <<'PY'
import copy, hashlib, json, sys
d = json.load(open(sys.argv[1]))
# the recorded torch script is the committing machine's path: point it at this
# tree's copy so that only the rebuilt executable differs on disk
ts = sys.argv[6]
d["artifacts"]["torch_script"] = {"path": ts, "sha256": hashlib.sha256(open(ts, "rb").read()).hexdigest()}
plan, sha = sys.argv[3], {"64x64x64": sys.argv[4], "96x80x72": sys.argv[5]}
ren = {"tessera-cpu": "tessera-gpu", "openblas": "cublas"}
for rt in d["routes"]:
    on = rt["name"] in ("tessera-gpu", "cublas")
    rt["available"], rt["reason"] = on, (None if on else "synthetic GPU-shaped test document")
d["order"]["base_routes"] = ["tessera-gpu", "cublas"]
for p in d["order"]["planned"]: p["routes"] = [ren[x] for x in p["routes"]]
for e in d["order"]["realized"]: e["route"] = ren[e["route"]]
for r in d["rows"]:
    r["route"] = r["result"]["route"] = ren[r["route"]]
    a = r["argv"]
    a[a.index("--route") + 1] = r["route"]
    a[a.index("--torch-script") + 1] = ts
    # the four GPU metrics from the two CPU ones, each sample half the time,
    # so that all of them still fit in the child's recorded run time
    half = lambda arr: [dict(s, ns=max(1, s["ns"] // 2)) for s in arr]
    m = r["result"]["metrics"]
    r["result"]["metrics"] = {"gpu_batch": half(m["wall_batch"]), "gpu_single": half(m["wall_single"]),
                              "e2e_batch": half(m["wall_batch"]), "e2e_single": half(m["wall_single"])}
    if r["route"] == "tessera-gpu":
        r["result"]["plan_info"]["plan"] = plan
        r["result"]["plan_info"]["source_sha256"] = sha[r["shape"]]
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
check "GPU-shaped document: report regenerated" bash -c "'$T' report '$G' >/dev/null"
expect_rc 0 "GPU-shaped document passes the audit" "$T" audit "$G"
check "GPU-shaped: 16 cells, 8 ratios (four GPU metrics)" grep -q "16 table cells, 8 paired ratios" "$W/out"
expect_rc 1 "GPU-shaped --current-artifacts: only the rebuilt executable differs" "$T" audit --current-artifacts "$G"
# (only artifact findings: the rebuilt executable, and on another machine than the
# committing one also its libraries' paths)
if grep -q '2 sources regenerated' "$W/out" && ! grep '^REJECT' "$W/out" | grep -qv '^REJECT artifact_changed' &&
   grep -q '^REJECT artifact_changed: artifacts.executable' "$W/out"; then
  ok "GPU-shaped: both sources regenerated and equal"
else
  bad "GPU-shaped: both sources regenerated and equal"
  grep -E "REJECT|FAIL|regenerated" "$W/out" | head -8
fi
expect_rc 0 "GPU-shaped self-test" "$T" audit --self-test "$G"
check "GPU-shaped self-test: missing source hash is source_hash" grep -Eq "^self-test: missing_source_hash +rejected: source_hash: row seq [0-9]+ \(round [0-9]+, [0-9x]+, tessera-gpu\)" "$W/out"
corrupt "$G" "$W/g2" 'r=[x for x in d["rows"] if x["route"]=="tessera-gpu"][1]; r["result"]["plan_info"]["source_sha256"]="0"*64'
expect_rc 1 "a source hash that varies between rounds" "$T" audit "$W/g2"
check "source_hash names the row" grep -q "^REJECT source_hash: row seq .*tessera-gpu" "$W/out"

# A torch-shaped document from the GPU-shaped one (cublas rows become torch
# rows that forked from a zygote, docs/protocol.md): it passes; a forked child
# that is the zygote itself, a missing child record on a valid row, a nonzero
# child exit and a row mode that contradicts the run's are rejected as
# isolation, naming the row.
Z=$W/torch
mkdir -p "$Z"
python3 - "$G/results.json" "$Z/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for rt in d["routes"]:
    if rt["name"] == "cublas": rt["available"], rt["reason"] = False, "synthetic torch-shaped test document"
    if rt["name"] == "torch": rt["available"], rt["reason"] = True, None
d["order"]["base_routes"] = ["tessera-gpu" if x == "tessera-gpu" else "torch" for x in d["order"]["base_routes"]]
for p in d["order"]["planned"]: p["routes"] = ["torch" if x == "cublas" else x for x in p["routes"]]
for e in d["order"]["realized"]: e["route"] = "torch" if e["route"] == "cublas" else e["route"]
d["torch_process"] = {"mode": "fork", "socket": "/tmp/tessera-torch-1.sock", "ready": {"pid": 4000}}
n = 0
for r in d["rows"]:
    if r["route"] == "cublas":
        n += 1
        r["route"] = r["result"]["route"] = "torch"
        a = r["argv"]
        a[a.index("--route") + 1] = "torch"
        a[a.index("--result-fd"):a.index("--result-fd")] = ["--torch-zygote", "/tmp/tessera-torch-1.sock"]
        r["result"]["torch_process"] = {"mode": "zygote-fork", "socket": "/tmp/tessera-torch-1.sock",
                                        "pid": 4000, "child_pid": 5000 + n, "exit_code": 0, "signal": None}
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
check "torch-shaped document: report regenerated" bash -c "'$T' report '$Z' >/dev/null"
expect_rc 0 "torch-shaped document (forked rows) passes the audit" "$T" audit "$Z"
for bad in 'tp["child_pid"] = tp["pid"]' 'del tp["child_pid"]' 'tp["exit_code"] = 3' 'tp["mode"] = "exec"'; do
  corrupt "$Z" "$W/z2" "r=[x for x in d['rows'] if x['route']=='torch'][2]; tp=r['result']['torch_process']; $bad"
  expect_rc 1 "torch row: $bad" "$T" audit "$W/z2"
  check "torch row: $bad is isolation, naming the row" grep -q "^REJECT isolation: row seq .*torch" "$W/out"
done

echo "test_audit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
