#!/usr/bin/env bash
# Shapes with their own batch and ops in one bench run (docs/protocol.md,
# "Shapes"; docs/zoo.md): on the CPU routes with tiny budgets, a run over
# three zoo shapes of three classes (one :NT, one with a batch of 256) and a
# run over two non-zoo tokens where the global --trans-a/--batch fill in what
# a token leaves out. Each row records its shape's batch and ops, the child
# measured exactly that problem (its result's problem, the element counts of
# its validation receipts) and every output was validated; both runs pass
# `tessera audit`; the zoo run's report has the standings by zoo class, the
# same text `tessera zoo --summarize` prints, the other run has none; the
# audit recomputes the section (an edited geomean or worst ratio, a removed
# section, a shape entry's batch changed each fail it). Between two of
# tessera's routes --summarize says which shapes ran the same kernel on both.
# usage: bash test_zoo_bench.sh BUILD_DIR SOURCE_DIR
set -u
B=$1
T=$B/tessera
W=$(mktemp -d /tmp/tsr-zoo-bench.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
export TESSERA_TUNE_DB=off
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
# a sanitizer build's rows are instrumented: the audit rejects them for that
# (and only that) reason
sanitized=0
grep -Eq '^TSR_(SANITIZE|FUZZ):[A-Z]+=(ON|address|thread)$' "$B/CMakeCache.txt" 2>/dev/null && sanitized=1
audit_ok() { # DIR: the audit passes (sanitizer build: its only findings are instrumented rows)
  "$T" audit "$1" >"$W/a.out" 2>&1 && tail -1 "$W/a.out" | grep -qx PASS && return 0
  [ $sanitized = 1 ] && grep -q '^REJECT instrumented' "$W/a.out" &&
    ! grep -E '^(REJECT|FAIL) ' "$W/a.out" | grep -qv '^REJECT instrumented'
}
common=(--routes tessera-cpu,openblas --rounds 2 --samples 1 --sample-ms 1 --warmup-ms 0 --threads 1
        --oracle-cache none --no-progress)

# ---- a run over zoo shapes ------------------------------------------------------
Z=$W/zoo
timeout 120 "$T" bench "${common[@]}" --shapes '1x4096x4096:NT,32x32x16384,256*64x64x64' --out "$Z" \
  >"$W/zoo.out" 2>&1 && ok || bad "zoo run: $(tail -5 "$W/zoo.out")"
# rows: shape -> (batch, op_a, op_b)
check_rows() { # results.json, python dict literal of the expected kinds
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = eval(sys.argv[2])
assert {s["label"]: (s["batch"], s["op_a"], s["op_b"]) for s in d["protocol"]["shapes"]} == want, d["protocol"]["shapes"]
assert len(d["rows"]) == 2 * 2 * len(want), len(d["rows"])
for r in d["rows"]:
    b, oa, ob = want[r["shape"]]
    p = r["result"]["problem"]
    assert r["status"] == "ok", (r["shape"], r["route"], r["status"], r["detail"])
    assert (r["batch"], r["op_a"], r["op_b"]) == (b, oa, ob), r["shape"]
    assert (p["batch"], p["op_a"], p["op_b"]) == (b, oa, ob), (r["shape"], p)
    argv = r["argv"]
    assert argv[argv.index("--batch") + 1] == str(b) and ("--trans-a" in argv) == (oa == "T") \
        and ("--trans-b" in argv) == (ob == "T"), argv
    v = r["result"]["validation"]
    assert len(v) >= 2 and all(x["passed"] and x["checked"] == x["expected"] == b * p["m"] * p["n"] for x in v), v
    a = r["result"]["accuracy"]
    assert a["passed"] and a["checked"] == b * p["m"] * p["n"], a
PY
}
check_rows "$Z/results.json" '{"1x4096x4096:NT": (1, "N", "T"), "32x32x16384": (1, "N", "N"), "256*64x64x64": (256, "N", "N")}' \
  && ok || bad "zoo run rows"
audit_ok "$Z" && ok || bad "audit of the zoo run: $(grep -E 'REJECT|FAIL' "$W/a.out" | head -5)"
# the class section: in report.md and on stdout, as --summarize prints it
"$T" zoo --summarize "$Z" >"$W/summ.txt" 2>&1 && ok || bad "zoo --summarize: $(cat "$W/summ.txt")"
python3 - "$Z/report.md" "$W/summ.txt" "$W/zoo.out" <<'PY' && ok || bad "class section differs from zoo --summarize"
import sys
summ = open(sys.argv[2]).read()
assert summ.startswith("## tessera-cpu time / openblas time (wall_batch), by zoo class\n"), summ[:200]
for f in sys.argv[1], sys.argv[3]:
    text = open(f).read()
    assert summ in text, f
lines = [l for l in summ.splitlines() if l.startswith("| ") and l.split("|")[2].strip().isdigit()]
classes = [l.split("|")[1].strip() for l in lines]
assert classes == ["gemv", "long-k", "batched"], classes
assert "| batched | 1 |" in summ and "| 256*64x64x64 |" in summ and "| 1x4096x4096:NT |" in summ
PY

# the audit recomputes the section: edits and a removal are findings
tamper() { # name, python edit of report.md text, expected finding
  cp -r "$Z" "$W/$1"
  python3 - "$W/$1/report.md" "$2" <<'PY'
import re, sys
p = sys.argv[1]
t = open(p).read()
exec(sys.argv[2])
open(p, "w").write(t)
PY
  "$T" audit "$W/$1" >"$W/t.out" 2>&1
  local rc=$?
  [ $rc = 1 ] && grep -q "$3" "$W/t.out" && ok || bad "$1: exit $rc, no '$3': $(grep REJECT "$W/t.out" | head -3)"
}
# the geomean of long-k, one digit up (re-rendered numbers: 3 decimals)
tamper geomean 't = re.sub(r"(\| long-k \| 1 \| )([0-9.]+)", lambda m: m.group(1) + "%.3f" % (float(m.group(2)) + 0.001), t)' \
  "zoo classes (wall_batch, long-k): 1 shapes, geomean"
tamper worst 't = re.sub(r"(\| batched \| 256\*64x64x64 \| )([0-9.]+)", lambda m: m.group(1) + "%.3f" % (float(m.group(2)) + 0.5), t)' \
  "zoo shapes (wall_batch, 256\*64x64x64): ratio"
tamper removed 't = re.sub(r"## tessera-cpu time / openblas time \(wall_batch\), by zoo class\n.*?\n\n\|.*?\n\n", "", t, flags=re.S)' \
  "no tessera-cpu / openblas section by zoo class"
# a shape entry whose batch is not its token's
cp -r "$Z" "$W/entry"
python3 - "$W/entry/results.json" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["protocol"]["shapes"][2]["batch"] = 128
json.dump(d, open(p, "w"), indent=1)
PY
"$T" audit "$W/entry" >"$W/t.out" 2>&1
[ $? = 1 ] && grep -q "label '256\*64x64x64' gives batch 256 ops NN, the entry records batch 128" "$W/t.out" && ok ||
  bad "shape entry batch: $(grep REJECT "$W/t.out" | head -3)"

# ---- two of tessera's routes: which shapes ran the same kernel on both --------
# (the tuned-vs-default replay's question: a ratio between identical kernels is
# the protocol's noise). The database is off, so every shape runs one plan on
# both routes; then one shape's tuned side is edited to another plan in one round.
K=$W/kern
timeout 120 "$T" bench "${common[@]/openblas/tessera-cpu-default}" --shapes '1x4096x4096:NT,32x32x16384' \
  --out "$K" >"$W/kern.out" 2>&1 && ok || bad "two-route run: $(tail -5 "$W/kern.out")"
ks() { "$T" zoo --summarize --route tessera-cpu --peer tessera-cpu-default --metric wall_batch "$1"; }
ks "$K" >"$W/ks.txt" 2>&1 && ok || bad "zoo --summarize of the two routes: $(cat "$W/ks.txt")"
grep -q '^2 of 2 shapes ran the same kernel on both routes' "$W/ks.txt" &&
  grep -q '| 1x4096x4096:NT | .* | same |$' "$W/ks.txt" && grep -q '| 32x32x16384 | .* | same |$' "$W/ks.txt" &&
  ! grep -q 'whose kernels differ' "$W/ks.txt" && ok || bad "same kernels not said: $(cat "$W/ks.txt")"
python3 - "$K/results.json" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
r = [r for r in d["rows"] if r["route"] == "tessera-cpu" and r["shape"] == "32x32x16384"]
assert len(r) == 2, len(r)
r[1]["result"]["plan_info"]["plan"] += ",edited"
json.dump(d, open(p, "w"), indent=1)
PY
ks "$K" >"$W/ks.txt" 2>&1 && ok || bad "zoo --summarize of the edited run: $(cat "$W/ks.txt")"
grep -q '^1 of 2 shapes ran the same kernel on both routes.* Over the 1 whose kernels differ: geomean [0-9.]*, worst 32x32x16384 ' "$W/ks.txt" &&
  grep -q '| 32x32x16384 | .* | differ |$' "$W/ks.txt" && grep -q '| 1x4096x4096:NT | .* | same |$' "$W/ks.txt" &&
  ok || bad "a kernel that differs in one round not said: $(cat "$W/ks.txt")"
# a peer's row names its library call, not a kernel: no kernels column against openblas
grep -q 'kernels' "$W/summ.txt" && bad "kernels column against openblas: $(cat "$W/summ.txt")" || ok

# ---- global defaults for tokens without their own -------------------------------
G=$W/glob
timeout 120 "$T" bench "${common[@]}" --shapes '24x16x8,2*16x24x8:NN' --trans-a --batch 3 --out "$G" \
  >"$W/glob.out" 2>&1 && ok || bad "defaults run: $(tail -5 "$W/glob.out")"
check_rows "$G/results.json" '{"24x16x8": (3, "T", "N"), "2*16x24x8:NN": (2, "N", "N")}' && ok || bad "defaults run rows"
audit_ok "$G" && ok || bad "audit of the defaults run: $(grep -E 'REJECT|FAIL' "$W/a.out" | head -5)"
grep -q "by zoo class" "$G/report.md" && bad "a run over non-zoo shapes has a class section" || ok
grep -q "^- 1 of 2 shapes have a batch or ops of their own" "$G/report.md" && ok || bad "report.md does not say which shapes have their own kind"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
