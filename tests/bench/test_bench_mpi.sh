#!/usr/bin/env bash
# The MPI build's bench (docs/protocol.md, "Under MPI") with `mpirun -np 2`
# on the CPU routes, four tiny shapes and small budgets: the job finishes,
# each rank's directory passes `tessera audit` on its own and the combined
# directory passes the combination audit; the shapes are dealt as
# documented (largest first, round-robin); one byte changed in a rank's
# results.json, a deleted rank directory, a shape moved between the rank
# lists and an edited report.md each fail the combined audit naming what
# broke; an existing --out and too many ranks are refused with exit 2 and
# nothing written; shapes with their own batch and ops keep them on their
# rank, and a job over zoo shapes ends its combined report with the
# standings by zoo class. Skips (77) without tessera-mpi.
# Usage: bash test_bench_mpi.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=$1
SRC=$2
T=$BUILD/tessera
# shellcheck source=../mpi_env.sh
. "$SRC/tests/mpi_env.sh"
tmp=$(mktemp -d /tmp/tsr_bench_mpi.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
export TESSERA_TUNE_DB=off
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
js() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(($2))" "$1"; }

# two shapes with a batch and ops of their own ([B*]MxNxK[:XY]): they must
# survive the division into the ranks' own command lines
shapes=32x32x32,3*48x40x24:NT,64x32x16:TN,24x24x56
opts=(--routes tessera-cpu,openblas --shapes "$shapes" --rounds 4 --samples 3 --sample-ms 2 --warmup-ms 5
      --threads 1 --no-progress)
D=$tmp/run
timeout 120 "${MPIRUN[@]}" "$TM" bench "${opts[@]}" --out "$D" >"$tmp/mpi.out" 2>&1 ||
  fail "mpirun bench: $(tail -20 "$tmp/mpi.out")"
grep -q "^mpi       2 rank(s); 4 shape(s) dealt" "$tmp/mpi.out" || fail "mpi header: $(head -3 "$tmp/mpi.out")"
grep -q "^digest: sha256:[0-9a-f]\{64\}$" "$tmp/mpi.out" || fail "no combined digest printed"
for r in 0 1; do
  [ -s "$D/rank$r/results.json" ] && [ -s "$D/rank$r/report.md" ] && [ -s "$D/rank$r/tables.json" ] ||
    fail "rank $r directory incomplete: $(ls "$D/rank$r" 2>&1)"
  $T audit "$D/rank$r" >"$tmp/a$r.out" 2>&1 || fail "audit of rank $r alone: $(grep -E 'REJECT|FAIL' "$tmp/a$r.out" | head -5)"
  # 2 shapes x 2 routes x 4 rounds, all valid
  [ "$(js "$D/rank$r/results.json" 'd["summary"]["rows"], d["summary"]["failed_rows"]')" = "(16, 0)" ] ||
    fail "rank $r rows: $(js "$D/rank$r/results.json" 'd["summary"]')"
done
# the division, computed here independently of the code:
want=$(python3 - "$shapes" <<'PY'
import sys
s = sys.argv[1].split(",")
def weight(t):  # m*n*k*batch, the token's own batch (else 1)
    b, _, dims = t.rpartition("*")
    m, n, k = (int(x) for x in dims.split(":")[0].split("x"))
    return m * n * k * (int(b) if b else 1)
w = [weight(x) for x in s]
order = sorted(range(len(s)), key=lambda i: (-w[i], i))
own = {s[i]: j % 2 for j, i in enumerate(order)}
print(";".join(",".join(x for x in s if own[x] == r) for r in (0, 1)))
PY
)
got=$(js "$D/combined.json" '";".join(",".join(p["shapes"]) for p in d["per_rank"])')
[ "$got" = "$want" ] || fail "division: combined.json deals $got, the documented rule $want"
got=$(js "$D/combined.json" '";".join(",".join(s["label"] for s in json.load(open(sys.argv[1].rsplit("/",1)[0]+"/rank%d/results.json" % r))["protocol"]["shapes"]) for r in (0, 1))')
[ "$got" = "$want" ] || fail "division: the ranks measured $got, the documented rule $want"
[ "$(js "$D/combined.json" 'd["schema"], d["ranks"], len(d["hosts"])')" = "('tessera-bench-mpi/1', 2, 1)" ] ||
  fail "combined.json header: $(head -c 300 "$D/combined.json")"
$T audit "$D" >"$tmp/c.out" 2>&1 || fail "combined audit: $(grep -E 'REJECT|FAIL' "$tmp/c.out" | head -5)"
tail -1 "$tmp/c.out" | grep -qx PASS || fail "combined audit does not end in PASS"
grep -q "^combination .*2 rank directories audited), 4 shapes of the command; report.md regenerated and compared whole" "$tmp/c.out" ||
  fail "combination line: $(grep combination "$tmp/c.out")"
dg=$(sed -n "s/^digest: sha256://p" "$tmp/mpi.out" | tail -1) # the combined digest, after the ranks'
$T audit --digest "$dg" "$D" >/dev/null 2>&1 || fail "--digest of the printed combined digest not verified"
# the report names rank, host and every shape's figures with their accuracy column
for s in ${shapes//,/ }; do grep -qF "## $s — rank " "$D/report.md" || fail "report.md has no section for $s"; done
# each rank's rows carry their shape's own batch and ops
for r in 0 1; do
  bad=$(js "$D/rank$r/results.json" '[(x["shape"], x["batch"], x["op_a"] + x["op_b"], x["result"]["problem"]["batch"], x["result"]["problem"]["op_a"] + x["result"]["problem"]["op_b"]) for x in d["rows"] if (x["batch"], x["op_a"] + x["op_b"]) != {"3*48x40x24:NT": (3, "NT"), "64x32x16:TN": (1, "TN")}.get(x["shape"], (1, "NN")) or (x["batch"], x["op_a"], x["op_b"]) != (x["result"]["problem"]["batch"], x["result"]["problem"]["op_a"], x["result"]["problem"]["op_b"])]')
  [ "$bad" = "[]" ] || fail "rank $r rows with the wrong batch or ops: $bad"
done
grep -q "| tessera-cpu | [0-9.]* .*| strict | [0-9.e-]* | 4/4 |" "$D/report.md" || fail "report.md rows lack accuracy columns"

# ---- tampering: each fails the combined audit, naming what broke ---------------
audit_fails() { # dir, expected pattern
  $T audit "$1" >"$tmp/x.out" 2>&1
  local rc=$?
  [ $rc = 1 ] || { fail "$1: audit exit $rc, want 1: $(tail -3 "$tmp/x.out")"; return; }
  grep -q "$2" "$tmp/x.out" || fail "$1: no finding '$2': $(grep REJECT "$tmp/x.out" | head -5)"
}
cp -r "$D" "$tmp/byte"
python3 - "$tmp/byte/rank1/results.json" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
i = b.index(b'"wall_ns": ') + 11   # one digit of a row's wall time
b[i] = ord("1") if b[i] != ord("1") else ord("2")
open(p, "wb").write(bytes(b))
PY
audit_fails "$tmp/byte" "REJECT rank_record: rank 1: rank1/results.json has SHA-256"
cp -r "$D" "$tmp/gone" && rm -rf "$tmp/gone/rank0"
audit_fails "$tmp/gone" "REJECT rank_dir: rank 0: .*rank0: No such file"
cp -r "$D" "$tmp/report" && sed -i '0,/| 4\/4 |/s//| 3\/4 |/' "$tmp/report/report.md"
audit_fails "$tmp/report" "REJECT combined_report: report.md: line"
# a shape dropped from the command (and from combined.json's list): the rank measured an extra one
cp -r "$D" "$tmp/lost"
python3 - "$tmp/lost/combined.json" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["shapes"] = d["shapes"][1:]
json.dump(d, open(p, "w"), indent=2)
PY
audit_fails "$tmp/lost" "REJECT shape_coverage"
grep -q "REJECT digest: combined.json" "$tmp/x.out" || fail "an edited combined.json keeps its digest"

# ---- a job over zoo shapes: the combined report's standings by zoo class ------------
# the same class table as `tessera zoo --summarize` over the rank directories; the
# combination audit regenerates report.md and compares it whole
Z=$tmp/zoo
timeout 120 "${MPIRUN[@]}" "$TM" bench --routes tessera-cpu,openblas --rounds 2 --samples 1 --sample-ms 1 \
  --warmup-ms 0 --threads 1 --no-progress --oracle-cache none \
  --shapes '1x4096x4096:NT,32x32x16384,256*64x64x64,64x64x8192' --out "$Z" >"$tmp/z.out" 2>&1 ||
  fail "mpirun bench over zoo shapes: $(tail -5 "$tmp/z.out")"
$T audit "$Z" >"$tmp/za.out" 2>&1 || fail "combined audit of the zoo job: $(grep -E 'REJECT|FAIL' "$tmp/za.out" | head -5)"
$T zoo --summarize "$Z/rank0" "$Z/rank1" >"$tmp/zs.out" 2>&1 || fail "zoo --summarize of the ranks: $(cat "$tmp/zs.out")"
python3 - "$Z/report.md" "$tmp/zs.out" <<'PY' || fail "combined class section differs from zoo --summarize"
import sys
def classes(text):
    i = text.index("## tessera-cpu time / openblas time (wall_batch), by zoo class\n")
    return text[i:].split("\n\n")[1]  # the class table
rep, summ = open(sys.argv[1]).read(), open(sys.argv[2]).read()
assert classes(rep) == classes(summ), (classes(rep), classes(summ))
assert "| long-k | 2 |" in classes(rep) and "| batched | 1 |" in classes(rep), classes(rep)
PY

# ---- refusals: exit 2, nothing written ------------------------------------------------
timeout 60 "${MPIRUN[@]}" "$TM" bench "${opts[@]}" --out "$D" >"$tmp/e.out" 2>&1
[ $? = 2 ] || fail "existing --out: not exit 2: $(tail -3 "$tmp/e.out")"
grep -q "already exists" "$tmp/e.out" || fail "existing --out: no message"
timeout 60 mpirun -np 3 --oversubscribe --bind-to none "$TM" bench --routes tessera-cpu --shapes 32x32x32,24x24x56 \
  --out "$tmp/three" >"$tmp/r.out" 2>&1
[ $? = 2 ] || fail "3 ranks for 2 shapes: not exit 2: $(tail -3 "$tmp/r.out")"
[ ! -e "$tmp/three" ] || fail "3 ranks for 2 shapes: $tmp/three was created"
grep -q "3 ranks for 2 shapes" "$tmp/r.out" || fail "3 ranks for 2 shapes: no message: $(head -3 "$tmp/r.out")"

[ "$fails" = 0 ] && echo "test_bench_mpi: all checks passed"
[ "$fails" = 0 ]
