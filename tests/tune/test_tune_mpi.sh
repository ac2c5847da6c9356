#!/usr/bin/env bash
# The MPI build's tune (docs/tune.md, "Scale-out") with `mpirun -np 2` on
# the CPU backend, tiny shapes and budgets: the merged database equals a
# single-process tune's winners where that tune was unambiguous, every rank
# holds the merged file, a rerun resumes (skips finished items), the merge
# of two separate shard processes gives the same database, and a rank
# killed with SIGKILL mid-run loses only its own unfinished item: a rerun of
# the same command recovers everything. Skips (77) without tessera-mpi.
# Usage: bash test_tune_mpi.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=$1
SRC=$2
T=$BUILD/tessera
# shellcheck source=../mpi_env.sh
. "$SRC/tests/mpi_env.sh"
tmp=$(mktemp -d /tmp/tsr_tune_mpi.XXXXXX)
mpid=
cleanup() {
  [ -n "$mpid" ] && kill -9 "$mpid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
export XDG_CACHE_HOME=$tmp/cache
export TESSERA_TUNE_DB=off
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
q() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$@"; }
cmp_dbs() { # reference db, other db, min unambiguous
  $T tune --show --json --db "$1" >"$tmp/ref.json" && $T tune --show --json --db "$2" >"$tmp/other.json" &&
    python3 "$SRC/tests/tune/tune_compare.py" "$tmp/ref.json" "$tmp/other.json" --min-unambiguous "$3"
}

# Each tune measures the incumbent and a valid, ~40x slower user plan, so
# the single-process winner is unambiguous, load permitting
# (test_tune_shard.sh).
shapes=64x64x64,96x64x80,48x64x32,32x32x32
slow="a=staged,b=staged,bk=8,bm=16,bn=32,tm=4,tn=16,threads=1,isa=generic"
opts=(--backend cpu --shape "$shapes" --plan "$slow" --max-candidates 2 --rounds 2 --sample-ms 2
      --warmup-ms 5 --quiet --in-process)

# ---- np 2 against one process ----------------------------------------------------
$T tune "${opts[@]}" --db "$tmp/single.db" >"$tmp/single.out" 2>&1 || fail "single-process tune: $(cat "$tmp/single.out")"
timeout 120 "${MPIRUN[@]}" "$TM" tune "${opts[@]}" --db "$tmp/mpi/tune.db" >"$tmp/mpi.out" 2>&1 ||
  fail "mpirun tune: $(tail -20 "$tmp/mpi.out")"
grep -q "^mpi       2 rank(s); 4 work item(s), 0 already finished" "$tmp/mpi.out" || fail "mpi header: $(head -3 "$tmp/mpi.out")"
[ -s "$tmp/mpi/tune.rank0.db" ] && [ -s "$tmp/mpi/tune.rank1.db" ] || fail "rank files missing: $(ls "$tmp/mpi")"
[ "$(grep -c '^item ' "$tmp/mpi.out")" = 4 ] || fail "not 4 items run: $(grep '^item' "$tmp/mpi.out")"
cmp_dbs "$tmp/single.db" "$tmp/mpi/tune.db" 1 || fail "np 2 winners differ from one process"
prov=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["tuned"]; print(all(e["ranks"] == 2 and e["rank"] in (0, 1) and e["host"] for e in t), len(t))' "$tmp/other.json")
[ "$prov" = "True 4" ] || fail "merged entries lack rank provenance: $prov"
$T tune --show --db "$tmp/mpi/tune.db" | grep -q "measured on .*, rank [01] of 2" || fail "--show does not say which rank measured"

# a rerun finds everything finished: nothing tuned again, the same entries
runs=$(q "$tmp/mpi/tune.db" "SELECT count(*) FROM runs")
timeout 120 "${MPIRUN[@]}" "$TM" tune "${opts[@]}" --db "$tmp/mpi/tune.db" >"$tmp/mpi2.out" 2>&1 ||
  fail "mpirun rerun: $(tail -20 "$tmp/mpi2.out")"
grep -q "^mpi       2 rank(s); 4 work item(s), 4 already finished (skipped)" "$tmp/mpi2.out" ||
  fail "rerun did not skip: $(head -3 "$tmp/mpi2.out")"
[ "$(q "$tmp/mpi/tune.db" "SELECT count(*) FROM runs")" = "$runs" ] || fail "rerun added runs"
cmp_dbs "$tmp/single.db" "$tmp/mpi/tune.db" 1 || fail "rerun changed the winners"

# ---- shard files of two separate processes, merged: the same database ---------
$T tune "${opts[@]}" --shard 0/2 --db "$tmp/s0.db" >"$tmp/s0.out" 2>&1 &
p0=$!
$T tune "${opts[@]}" --shard 1/2 --db "$tmp/s1.db" >"$tmp/s1.out" 2>&1 &
p1=$!
wait $p0 || fail "shard 0: $(cat "$tmp/s0.out")"
wait $p1 || fail "shard 1: $(cat "$tmp/s1.out")"
$T tune --merge "$tmp/shards.db" "$tmp/s1.db" "$tmp/s0.db" >/dev/null || fail "merge of the shards"
cmp_dbs "$tmp/mpi/tune.db" "$tmp/shards.db" 1 || fail "merged shards differ from the MPI database"

# ---- kill -9 of one rank mid-run ---------------------------------------------------
# Eight items of about a second each; once rank 1's file holds a finished run,
# rank 1 is killed. OpenMPI then ends the job.
kshapes=64x64x64,96x64x80,48x64x32,32x32x32,80x48x64,64x32x96,72x40x56,40x72x48
kopts=(--backend cpu --shape "$kshapes" --plan "$slow" --max-candidates 3 --rounds 2 --sample-ms 40
       --warmup-ms 20 --quiet --in-process --db "$tmp/k/tune.db")
done_in() { [ -s "$1" ] && q "$1" "SELECT count(*) FROM runs WHERE status='done'" 2>/dev/null || echo 0; }
"${MPIRUN[@]}" "$TM" tune "${kopts[@]}" >"$tmp/k.out" 2>&1 &
mpid=$!
victim=
for _ in $(seq 600); do
  sleep 0.1
  if [ -z "$victim" ]; then
    for c in $(ps -o pid= --ppid "$mpid" 2>/dev/null); do
      tr '\0' '\n' <"/proc/$c/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" && victim=$c
    done
  fi
  d0=$(done_in "$tmp/k/tune.rank0.db")
  d1=$(done_in "$tmp/k/tune.rank1.db")
  [ -n "$victim" ] && [ "$d1" -ge 1 ] && break
  kill -0 "$mpid" 2>/dev/null || break
done
if [ -z "$victim" ] || ! kill -0 "$mpid" 2>/dev/null; then
  fail "kill test: no rank 1 to kill while the job ran (victim '$victim'): $(tail -5 "$tmp/k.out")"
else
  before1=$(done_in "$tmp/k/tune.rank1.db")
  [ "$before1" -ge 1 ] || fail "kill test: rank 1 had finished nothing when killed"
  kill -9 "$victim"
  wait "$mpid"
  krc=$?
  mpid=
  [ "$krc" != 0 ] || fail "the job whose rank was killed exited 0"
  after0=$(done_in "$tmp/k/tune.rank0.db")
  after1=$(done_in "$tmp/k/tune.rank1.db")
  [ "$after1" -ge "$before1" ] || fail "the killed rank lost finished work: $before1 done before, $after1 after"
  [ "$after0" -ge "$d0" ] || fail "rank 0 lost finished work: $d0 done before, $after0 after"
  [ $((after0 + after1)) -lt 8 ] || fail "kill test: every item had finished before the kill (not a test)"
  [ "$(q "$tmp/k/tune.rank1.db" "PRAGMA integrity_check")" = ok ] || fail "the killed rank's file is damaged"
  # an item a rank was inside stays 'running' (unless the kill fell between items)
  unfinished=$(q "$tmp/k/tune.rank1.db" "SELECT count(*) FROM runs WHERE status='running'")
  finished=$((after0 + after1))
  echo "kill test: rank 1 killed with $before1 finished run(s) in its file; $after0 + $after1 finished in the rank files after, $unfinished left unfinished by rank 1"
  # the same command again: finished items skipped, the rest tuned, all merged
  timeout 120 "${MPIRUN[@]}" "$TM" tune "${kopts[@]}" >"$tmp/k2.out" 2>&1 || fail "rerun after the kill: $(tail -20 "$tmp/k2.out")"
  grep -q "^mpi       2 rank(s); 8 work item(s), $finished already finished (skipped)" "$tmp/k2.out" ||
    fail "rerun after the kill: want $finished skipped: $(head -2 "$tmp/k2.out")"
  [ "$(grep -c '^item ' "$tmp/k2.out")" = $((8 - finished)) ] || fail "rerun ran $(grep -c "^item " "$tmp/k2.out") items, want $((8 - finished))"
  [ "$(q "$tmp/k/tune.db" "SELECT count(*) FROM tuned")" = 8 ] || fail "merged DB after recovery lacks keys"
  # each item finished exactly once over both jobs
  [ "$(q "$tmp/k/tune.db" "SELECT count(*) FROM runs WHERE status='done'")" = 8 ] ||
    fail "finished runs after recovery: $(q "$tmp/k/tune.db" "SELECT count(*) FROM runs WHERE status='done'"), want 8"
  [ "$(q "$tmp/k/tune.db" "SELECT count(*) FROM (SELECT m, n, k FROM runs WHERE status='done' GROUP BY m, n, k)")" = 8 ] ||
    fail "an item finished twice"
fi

[ "$fails" = 0 ] && echo "test_tune_mpi: all checks passed"
[ "$fails" = 0 ]
