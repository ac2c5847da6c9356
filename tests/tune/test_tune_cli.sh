#!/usr/bin/env bash
# tessera tune end to end on the CPU backend with tiny shapes and budgets:
# bad input, a stored result that `tessera gemm` then uses, results files
# that are never overwritten, two concurrent tuners on one database, and a
# corrupted database file (clear message, defaults, bytes unchanged).
# Usage: bash test_tune_cli.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=$1
T=$BUILD/tessera
tmp=$(mktemp -d /tmp/tsr_tune_cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
export TESSERA_TUNE_DB=off
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect_rc() { # want, description, command...
  local want=$1 what=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" = "$want" ] || fail "$what: exit $rc, want $want; stderr: $(cat "$tmp/err")"
}

# ---- bad input: exit 2 naming the option -------------------------------------
expect_rc 2 "no shape" $T tune --backend cpu --no-db
grep -q -- "--shape" "$tmp/err" || fail "no shape: message does not name --shape"
expect_rc 2 "max-candidates 0" $T tune --shape 32x32x32 --backend cpu --max-candidates 0 --no-db
grep -q -- "--max-candidates" "$tmp/err" || fail "max-candidates 0 not named"
expect_rc 2 "odd rounds" $T tune --shape 32x32x32 --backend cpu --rounds 3 --no-db
grep -q -- "--rounds" "$tmp/err" || fail "--rounds 3 not named"
expect_rc 2 "negative seconds" $T tune --shape 32x32x32 --backend cpu --max-seconds -1 --no-db
expect_rc 2 "compile threads -1" $T tune --shape 32x32x32 --backend cpu --compile-threads -1 --no-db
grep -q -- "--compile-threads: '-1' is not an integer in 0..64" "$tmp/err" ||
  fail "--compile-threads -1 not named with its value: $(cat "$tmp/err")"
expect_rc 2 "compile threads x" $T tune --shape 32x32x32 --backend cpu --compile-threads 2x --no-db
grep -q -- "--compile-threads: '2x'" "$tmp/err" || fail "--compile-threads 2x not named"
expect_rc 0 "tune --help" $T tune --help
grep -q -- "--compile-threads N" "$tmp/out" || fail "tune --help does not show --compile-threads"
grep -q -- "--order O" "$tmp/out" || fail "tune --help does not show --order"
expect_rc 2 "unknown order" $T tune --shape 32x32x32 --backend cpu --order random --no-db
grep -q -- "--order: 'random' is not prior or interleave" "$tmp/err" ||
  fail "--order random not named with its value: $(cat "$tmp/err")"
expect_rc 2 "untunable backend" $T tune --shape 32x32x32 --backend cublas --no-db
expect_rc 2 "unknown preset" $T tune --preset nope --backend cpu --no-db
grep -q "seed" "$tmp/err" || fail "unknown preset: message does not list seed"

# ---- over a limit: refused before the database, the oracle and --out ---------
expect_rc 2 "over the memory limit" timeout 20 $T tune --shape 65536x65536x65536 --backend cpu \
  --max-seconds 1 --db "$tmp/refused.db" --out "$tmp/refused"
grep -q "needs about .* of host memory" "$tmp/err" || fail "memory refusal message: $(cat "$tmp/err")"
expect_rc 2 "over the time budget" timeout 20 $T tune --shape 8192x8192x8192 --backend cpu \
  --max-seconds 1 --db "$tmp/refused.db" --out "$tmp/refused"
grep -q "more than --max-seconds 1" "$tmp/err" || fail "time refusal message: $(cat "$tmp/err")"
[ ! -e "$tmp/refused.db" ] && [ ! -e "$tmp/refused" ] || fail "a refused tune created its database or --out"
[ ! -e "$XDG_CACHE_HOME/tessera/oracle" ] || fail "a refused tune wrote to the oracle cache"

# ---- a budget the replay reserve fills: said, with the reserve ---------------
expect_rc 0 "tiny budget" $T tune --shape 32x32x32 --backend cpu --max-seconds 0.05 --rounds 2 \
  --compile-threads 2 \
  --no-db --out "$tmp/tiny" --quiet
grep -q "^note      the replay reserve, .* of --max-seconds 0.05: the search stopped after 1 candidate" \
  "$tmp/out" || fail "no replay-reserve note at --max-seconds 0.05: $(cat "$tmp/out")"
grep -q '"seconds_replay_reserve": [0-9]' "$tmp/tiny/tune_cpu_32x32x32.json" ||
  fail "results file lacks budget.seconds_replay_reserve"
# the CPU backend compiles nothing ahead: recorded as off, every candidate its own
grep -q '"off": "backend cpu compiles nothing ahead"' "$tmp/tiny/tune_cpu_32x32x32.json" ||
  fail "results file lacks prefetch.off for the CPU backend"
grep -q '"measured_not_precompiled": 1' "$tmp/tiny/tune_cpu_32x32x32.json" ||
  fail "results file lacks prefetch.measured_not_precompiled"
grep -q '"order": "prior"' "$tmp/tiny/tune_cpu_32x32x32.json" ||
  fail "results file lacks space.order prior (the default)"
# --order interleave: recorded in the results file
expect_rc 0 "order interleave" $T tune --shape 32x32x32 --backend cpu --max-candidates 3 --rounds 2 \
  --order interleave --no-db --out "$tmp/ilv" --quiet
grep -q '"order": "interleave"' "$tmp/ilv/tune_cpu_32x32x32.json" ||
  fail "results file lacks space.order interleave"

# ---- tune, store, then gemm uses it ------------------------------------------
db=$tmp/tune.db
expect_rc 0 "tune 96x64x80" $T tune --shape 96x64x80 --backend cpu --max-candidates 5 \
  --max-seconds 30 --rounds 2 --sample-ms 2 --warmup-ms 5 --db "$db" --out "$tmp/res" --quiet
cp "$tmp/out" "$tmp/tune_out"
grep -q "^decision " "$tmp/tune_out" || fail "tune output has no decision line"
grep -q "measured 5 " "$tmp/tune_out" || fail "tune did not measure exactly 5 candidates: $(grep budget "$tmp/tune_out")"
grep -q "fresh process each" "$tmp/tune_out" || grep -q "decision  incumbent (search best)" "$tmp/tune_out" ||
  fail "replay did not run in fresh processes: $(cat "$tmp/tune_out")"
res=$tmp/res/tune_cpu_96x64x80.json
[ -s "$res" ] || fail "results file $res missing"
grep -q '"schema": "tessera-tune/1"' "$res" || fail "results file lacks its schema"
expect_rc 2 "results never overwritten" $T tune --shape 96x64x80 --backend cpu --max-candidates 2 \
  --db "$db" --out "$tmp/res" --quiet
grep -q "never overwritten" "$tmp/err" || fail "overwrite refusal message"

TESSERA_TUNE_DB=$db $T gemm --shape 96x64x80 --backend cpu --samples 0 >"$tmp/gemm" 2>"$tmp/gemm_err" ||
  fail "gemm with the tuned DB failed: $(cat "$tmp/gemm_err")"
grep -q "^plan from tuned (exact" "$tmp/gemm" || fail "gemm did not use the tuned entry: $(cat "$tmp/gemm")"
if command -v sqlite3 >/dev/null; then
  stored=$(sqlite3 "$db" "SELECT plan FROM tuned WHERE m=96 AND n=64 AND k=80")
  grep -q "^plan      $stored\$" "$tmp/gemm" || fail "gemm plan is not the stored plan '$stored'"
  [ "$(sqlite3 "$db" "PRAGMA journal_mode")" = wal ] || fail "database not in WAL mode"
fi
TESSERA_TUNE_DB=off $T gemm --shape 96x64x80 --backend cpu --samples 0 >"$tmp/gemm" 2>&1
grep -q "^plan from default (tuning database off)" "$tmp/gemm" || fail "TESSERA_TUNE_DB=off not honoured"

expect_rc 0 "show" $T tune --show --db "$db"
grep -q "integrity ok" "$tmp/out" || fail "--show: integrity not ok"
grep -q "96x64x80" "$tmp/out" || fail "--show does not list the entry"
expect_rc 0 "show json" $T tune --show --db "$db" --json
grep -q '"integrity": "ok"' "$tmp/out" || fail "--show --json"
# the run's compiling ahead as stored (CPU: none; the 5 measured compiled themselves)
grep -q '"prefetch_threads": 0' "$tmp/out" || fail "--show --json lacks the run's prefetch_threads"
grep -q '"prefetch_measured_not_precompiled": 5' "$tmp/out" ||
  fail "--show --json lacks the run's prefetch_measured_not_precompiled"

# --loo: the one entry looked up as unseen (no other entry: its default), priced by
# the results folder's document; bad folders and combinations named, exit 2
expect_rc 0 "loo" $T tune --loo --db "$db" "$tmp/res"
grep -q "^  96x64x80 .* default$" "$tmp/out" || fail "--loo: the entry's line: $(cat "$tmp/out")"
grep -q "^summary: 1 entry, 0 served another entry's plan" "$tmp/out" ||
  fail "--loo: summary: $(cat "$tmp/out")"
expect_rc 2 "loo without a folder" $T tune --loo --db "$db"
grep -q -- "--loo: no folder" "$tmp/err" || fail "--loo without a folder: $(cat "$tmp/err")"
expect_rc 2 "loo missing folder" $T tune --loo --db "$db" "$tmp/nowhere"
grep -q -- "$tmp/nowhere" "$tmp/err" || fail "--loo: missing folder not named: $(cat "$tmp/err")"
expect_rc 2 "loo and merge" $T tune --loo --merge "$tmp/m.db" "$db"
expect_rc 2 "loo missing db" $T tune --loo --db "$tmp/none.db" "$tmp/res"
[ ! -e "$tmp/none.db" ] || fail "--loo created a database"

# ---- a zoo label as --shape: its batch and ops tuned, stored, served ----------
expect_rc 0 "tune 3*40x24x16:NT" $T tune --shape 3*40x24x16:NT --backend cpu --max-candidates 3 \
  --max-seconds 30 --rounds 2 --sample-ms 2 --warmup-ms 5 --db "$db" --out "$tmp/res" --quiet
grep -q "^tune      cpu 3\*40x24x16:NT batch 3 op(A)=N op(B)=T " "$tmp/out" ||
  fail "token tune: problem line: $(grep '^tune ' "$tmp/out")"
[ -s "$tmp/res/tune_cpu_3_40x24x16_NT.json" ] || fail "token tune: results file name: $(ls "$tmp/res")"
grep -q '"batch": 3' "$tmp/res/tune_cpu_3_40x24x16_NT.json" || fail "token tune: results lack batch 3"
# the same problem asked as a token and as flags: the stored entry, exactly
for ask in "3*40x24x16:NT" "40x24x16 --batch 3 --trans-b" "3*40x24x16:NT --batch 5 --trans-a"; do
  # shellcheck disable=SC2086
  TESSERA_TUNE_DB=$db $T plan --backend cpu --shape $ask >"$tmp/plan" 2>&1 || fail "plan $ask: $(cat "$tmp/plan")"
  grep -q "^problem   40x24x16 batch 3 op(A)=N op(B)=T " "$tmp/plan" || fail "plan $ask: $(grep problem "$tmp/plan")"
  grep -q "^from      tuned (exact" "$tmp/plan" || fail "plan $ask: not the tuned entry: $(grep from "$tmp/plan")"
done
# ops NN of the same extents and batch: another key, not served the NT entry exactly
TESSERA_TUNE_DB=$db $T plan --backend cpu --shape 3*40x24x16 >"$tmp/plan" 2>&1
grep -q "^from      tuned (exact" "$tmp/plan" && fail "3*40x24x16 (NN) served the NT entry exactly"

# ---- a read-only database: served by lookups, refused by the tuner ------------
# The tuned file, alone in a folder; file and folder read-only. Root ignores
# file modes, so as root the checks run as nobody (setpriv), on a copy of
# the binary outside the build tree (which nobody may not be able to reach).
ro=$tmp/ro
mkdir "$ro" && cp "$db" "$ro/tune.db"
as_user=()
RT=$T
if [ "$(id -u)" = 0 ]; then
  if command -v setpriv >/dev/null; then
    mkdir "$tmp/bin" && cp "$T" "$tmp/bin/tessera" && chmod 755 "$tmp" "$tmp/bin" "$ro"
    chmod 644 "$ro/tune.db"
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    RT=$tmp/bin/tessera
    "${as_user[@]}" "$RT" --version >/dev/null 2>&1 || as_user=(none)
  else
    as_user=(none)
  fi
fi
if [ "${as_user[0]:-}" = none ]; then
  echo "note: read-only database checks skipped: running as root, and cannot run as nobody (setpriv)"
else
  chmod 444 "$ro/tune.db" && chmod 555 "$ro"
  TESSERA_TUNE_DB=$ro/tune.db "${as_user[@]}" "$RT" gemm --shape 96x64x80 --backend cpu --samples 0 \
    >"$tmp/gemm" 2>"$tmp/gemm_err" || fail "gemm with a read-only DB failed: $(cat "$tmp/gemm_err")"
  grep -q "^plan from tuned (exact" "$tmp/gemm" ||
    fail "read-only DB: gemm did not use the tuned entry: $(grep 'plan from' "$tmp/gemm"); $(cat "$tmp/gemm_err")"
  [ "$(grep -c "^tessera: note: tuning database $ro/tune.db is read-only here" "$tmp/gemm_err")" = 1 ] ||
    fail "read-only DB: want one note that it is used read-only, got: $(cat "$tmp/gemm_err")"
  [ "$(ls -A "$ro")" = tune.db ] || fail "read-only DB: files appeared beside it: $(ls -A "$ro")"
  "${as_user[@]}" "$RT" tune --show --db "$ro/tune.db" >"$tmp/out" 2>"$tmp/err" ||
    fail "--show on a read-only DB: $(cat "$tmp/err")"
  grep -q "integrity ok" "$tmp/out" || fail "--show on a read-only DB: integrity not ok"
  # the tuner refuses before any work, naming the file (read-only file; then a
  # writable file in a read-only folder, where SQLite cannot create its -wal)
  expect_rc 2 "tune into a read-only DB" "${as_user[@]}" "$RT" tune --shape 96x64x80 --backend cpu \
    --max-candidates 2 --db "$ro/tune.db" --quiet --in-process
  grep -q "tuning database $ro/tune.db: read-only" "$tmp/err" ||
    fail "tune into a read-only DB: unclear message: $(cat "$tmp/err")"
  chmod 666 "$ro/tune.db"
  expect_rc 2 "tune into a DB in a read-only folder" "${as_user[@]}" "$RT" tune --shape 96x64x80 \
    --backend cpu --max-candidates 2 --db "$ro/tune.db" --quiet --in-process
  grep -q "tuning database $ro/tune.db: cannot be written here" "$tmp/err" ||
    fail "tune in a read-only folder: unclear message: $(cat "$tmp/err")"
  cmp -s "$db" "$ro/tune.db" || fail "read-only DB: the file was modified"
  [ "$(ls -A "$ro")" = tune.db ] || fail "read-only DB: files appeared beside it: $(ls -A "$ro")"
  chmod 755 "$ro" # so the trap can remove it when not root
fi

# ---- two tuners on one database at the same time ------------------------------
cdb=$tmp/concurrent.db
$T tune --shape 64x64x64 --backend cpu --max-candidates 4 --rounds 2 --sample-ms 2 \
  --warmup-ms 5 --db "$cdb" --quiet --in-process >"$tmp/c1" 2>&1 &
p1=$!
$T tune --shape 48x64x32 --backend cpu --max-candidates 4 --rounds 2 --sample-ms 2 \
  --warmup-ms 5 --db "$cdb" --quiet --in-process >"$tmp/c2" 2>&1 &
p2=$!
wait $p1 || fail "concurrent tuner 1 failed: $(cat "$tmp/c1")"
wait $p2 || fail "concurrent tuner 2 failed: $(cat "$tmp/c2")"
expect_rc 0 "show concurrent" $T tune --show --db "$cdb"
grep -q "integrity ok" "$tmp/out" || fail "concurrent DB integrity"
[ "$(grep -c ' done: measured 4' "$tmp/out")" = 2 ] || fail "concurrent DB lacks two finished runs: $(cat "$tmp/out")"

# ---- the replay child runs the candidate's whole text as it is ------------------
# (the tuner rejects a replay whose child reports another plan than the candidate's)
whole=$($T plan --shape 32x32x32 --backend cpu --precision strict --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["plan"])')
$T tune --replay-child --backend cpu --shape 32x32x32 --precision strict --plan "$whole" --samples 5 \
  --sample-ms 1 --warmup-ms 1 --no-db >"$tmp/child" 2>"$tmp/err" || fail "replay child: $(cat "$tmp/err")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"] == "ok" and d["plan"] == sys.argv[2], d' \
  "$tmp/child" "$whole" || fail "replay child ran another plan than $whole: $(cat "$tmp/child")"

# ---- corrupted database file ---------------------------------------------------
bad=$tmp/garbage.db
head -c 16384 /dev/urandom >"$bad"
sum0=$(sha256sum "$bad" | cut -d' ' -f1)
TESSERA_TUNE_DB=$bad $T gemm --shape 64x64x64 --backend cpu --samples 0 >"$tmp/gemm" 2>"$tmp/gemm_err"
rc=$?
[ $rc = 0 ] || fail "gemm with a corrupted DB: exit $rc"
grep -q "^plan from default (tuning database unreadable)" "$tmp/gemm" || fail "corrupted DB: defaults not reported"
[ "$(grep -c "warning: tuning database $bad: unreadable" "$tmp/gemm_err")" = 1 ] ||
  fail "corrupted DB: want exactly one clear warning, got: $(cat "$tmp/gemm_err")"
grep -q "^receipt   PASS" "$tmp/gemm" || fail "corrupted DB: the run did not continue"
expect_rc 2 "tune on a corrupted DB" $T tune --shape 32x32x32 --backend cpu --db "$bad" --quiet
grep -q "not a database" "$tmp/err" || fail "tune on a corrupted DB: unclear message: $(cat "$tmp/err")"
expect_rc 2 "show on a corrupted DB" $T tune --show --db "$bad"
[ "$(sha256sum "$bad" | cut -d' ' -f1)" = "$sum0" ] || fail "corrupted DB file was modified"
[ -e "$bad-wal" ] || [ -e "$bad-journal" ] && fail "side files created next to the corrupted DB"

if [ $fails = 0 ]; then echo "test_tune_cli: all checks passed"; else echo "test_tune_cli: $fails failure(s)"; fi
[ $fails = 0 ]
