#!/usr/bin/env bash
# Scale-out without MPI (docs/tune.md, "Scale-out"): `tessera tune --shard
# I/N` as two separate processes, then `tessera tune --merge`: the merged
# database has the keys a single process tunes, the same winners where that
# tune was unambiguous, the shards' provenance, and the same bytes whatever
# the order of the inputs; a shard run again resumes (skips what it
# finished); candidate blocks keep the faster entry; bad input exits 2.
# Usage: bash test_tune_shard.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=$1
SRC=$2
T=$BUILD/tessera
tmp=$(mktemp -d /tmp/tsr_tune_shard.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
export TESSERA_TUNE_DB=off
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect_rc() { # want, description, command...
  local want=$1 what=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" = "$want" ] || fail "$what: exit $rc, want $want; stderr: $(cat "$tmp/err")"
}
q() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$@"; }

# ---- bad input: one line naming the option or file, exit 2 --------------------
for bad in 2/2 x 0/0 -1/2 1/ 0/2x; do
  expect_rc 2 "--shard $bad" $T tune --shape 32x32x32 --backend cpu --shard "$bad" --db "$tmp/x.db"
  grep -q -- "--shard: '$bad'" "$tmp/err" || fail "--shard $bad: message: $(cat "$tmp/err")"
done
expect_rc 2 "--merge without inputs" $T tune --merge "$tmp/m.db"
grep -q "no input database" "$tmp/err" || fail "--merge without inputs: $(cat "$tmp/err")"
expect_rc 2 "an input without --merge" $T tune --shape 32x32x32 --backend cpu "$tmp/a.db"
grep -q "with --merge" "$tmp/err" || fail "operand without --merge: $(cat "$tmp/err")"
head -c 8192 /dev/urandom >"$tmp/garbage.db"
sum0=$(sha256sum "$tmp/garbage.db")
expect_rc 2 "--merge of a garbage file" $T tune --merge "$tmp/m.db" "$tmp/garbage.db"
grep -q "$tmp/garbage.db" "$tmp/err" || fail "garbage input not named: $(cat "$tmp/err")"
[ "$(sha256sum "$tmp/garbage.db")" = "$sum0" ] || fail "--merge modified its garbage input"
[ ! -e "$tmp/m.db" ] || fail "a refused merge created its output"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "refusal is not one line: $(cat "$tmp/err")"

# ---- one process, then two shards, then the merge ------------------------------
# Four shapes; each tune measures the incumbent and a valid but far slower
# user plan (the generic micro-kernel staged through tiny blocks, ~40x
# slower), so the single-process winner is unambiguous unless load spreads
# the incumbent's own samples over the gap (then its tie set holds both and
# tune_compare.py leaves that key out).
shapes=64x64x64,96x64x80,48x64x32,32x32x32
slow="a=staged,b=staged,bk=8,bm=16,bn=32,tm=4,tn=16,threads=1,isa=generic"
opts=(--backend cpu --shape "$shapes" --plan "$slow" --max-candidates 2 --rounds 2 --sample-ms 2
      --warmup-ms 5 --quiet --in-process)
expect_rc 0 "single-process tune" $T tune "${opts[@]}" --db "$tmp/single.db"
$T tune "${opts[@]}" --shard 0/2 --db "$tmp/s0.db" >"$tmp/s0.out" 2>&1 &
p0=$!
$T tune "${opts[@]}" --shard 1/2 --db "$tmp/s1.db" >"$tmp/s1.out" 2>&1 &
p1=$!
wait $p0 || fail "shard 0/2 failed: $(cat "$tmp/s0.out")"
wait $p1 || fail "shard 1/2 failed: $(cat "$tmp/s1.out")"
grep -q "^shard     0/2: 2 of 4 work items here, 0 of them already finished" "$tmp/s0.out" ||
  fail "shard 0/2 header: $(head -2 "$tmp/s0.out")"
# items j with j % 2 == shard: shapes 1 and 3 to shard 0, 2 and 4 to shard 1
[ "$(grep -c '^item .*shard 0 of 2' "$tmp/s0.out")" = 2 ] || fail "shard 0 ran $(grep -c '^item' "$tmp/s0.out") items"
grep -q "^item      2 of 4: 96x64x80, shard 1 of 2" "$tmp/s1.out" || fail "shard 1 items: $(grep '^item' "$tmp/s1.out")"

s0sum=$(sha256sum <"$tmp/s0.db")
expect_rc 0 "merge" $T tune --merge "$tmp/merged.db" "$tmp/s0.db" "$tmp/s1.db"
[ "$(sha256sum <"$tmp/s0.db")" = "$s0sum" ] || fail "--merge modified an input"
$T tune --show --json --db "$tmp/single.db" >"$tmp/single.json"
$T tune --show --json --db "$tmp/merged.db" >"$tmp/merged.json"
python3 "$SRC/tests/tune/tune_compare.py" "$tmp/single.json" "$tmp/merged.json" --min-unambiguous 1 ||
  fail "merged shards differ from the single-process tune"
prov=$(python3 -c 'import json,sys; print(sorted((e["m"], e["rank"], e["ranks"]) for e in json.load(open(sys.argv[1]))["tuned"]))' "$tmp/merged.json")
[ "$prov" = "[(32, 1, 2), (48, 0, 2), (64, 0, 2), (96, 1, 2)]" ] || fail "merged entries' shard provenance: $prov"
$T tune --show --db "$tmp/merged.db" >"$tmp/merged.txt"
grep -q "measured on .*, rank 1 of 2" "$tmp/merged.txt" || fail "--show does not say where entries were measured"

# the same database whatever the order of the inputs
expect_rc 0 "merge reversed" $T tune --merge "$tmp/merged2.db" "$tmp/s1.db" "$tmp/s0.db"
cmp -s "$tmp/merged.db" "$tmp/merged2.db" || fail "merge depends on the order of its inputs"
# an existing output is only replaced when it is an input
expect_rc 2 "merge over a non-input" $T tune --merge "$tmp/merged2.db" "$tmp/s0.db"
cmp -s "$tmp/merged.db" "$tmp/merged2.db" || fail "a refused merge changed its output"
expect_rc 0 "merge into an input" $T tune --merge "$tmp/merged2.db" "$tmp/merged2.db" "$tmp/s1.db"
cmp -s "$tmp/merged.db" "$tmp/merged2.db" || fail "merging an input again changed the result"

# ---- resume: a shard run again skips what it finished -------------------------
runs0=$(q "$tmp/s0.db" "SELECT count(*) FROM runs")
expect_rc 0 "shard 0/2 again" $T tune "${opts[@]}" --shard 0/2 --db "$tmp/s0.db"
grep -q "^shard     0/2: 2 of 4 work items here, 2 of them already finished" "$tmp/out" ||
  fail "shard rerun did not skip its finished items: $(head -2 "$tmp/out")"
[ "$(q "$tmp/s0.db" "SELECT count(*) FROM runs")" = "$runs0" ] || fail "shard rerun tuned again"

# ---- candidate blocks: each block's entry competes, the faster one stays -----
expect_rc 0 "blocks" $T tune --backend cpu --shape 64x48x64 --max-candidates 3 --rounds 2 \
  --sample-ms 2 --warmup-ms 5 --quiet --in-process --blocks 2 --shard 0/1 --db "$tmp/blocks.db"
[ "$(q "$tmp/blocks.db" "SELECT count(*) FROM runs WHERE status='done' AND nblocks=2")" = 2 ] ||
  fail "two candidate blocks did not give two runs"
# the blocks measured different search candidates (dealt round-robin)
[ "$(q "$tmp/blocks.db" "SELECT count(DISTINCT run_id) FROM candidates WHERE role='search' AND status NOT IN ('rejected-planner', 'unmeasured')")" = 2 ] ||
  fail "blocks: not both blocks measured search candidates"
[ "$(q "$tmp/blocks.db" "SELECT count(*) FROM (SELECT plan FROM candidates WHERE role='search' AND status != 'rejected-planner' GROUP BY plan HAVING count(*) > 1)")" = 0 ] ||
  fail "a search candidate was measured by both blocks"
[ "$(q "$tmp/blocks.db" "SELECT group_concat(block) FROM (SELECT block FROM runs ORDER BY block)")" = "0,1" ] ||
  fail "blocks: the runs are not blocks 0 and 1"
[ "$(q "$tmp/blocks.db" "SELECT count(*) FROM tuned t JOIN runs r ON r.id = t.run_id AND r.nblocks = 2")" = 1 ] ||
  fail "blocks: no single tuned entry from one of the block runs"

[ "$fails" = 0 ] && echo "test_tune_shard: all checks passed"
[ "$fails" = 0 ]
