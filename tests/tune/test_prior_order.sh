#!/usr/bin/env bash
# scripts/tune-prior-order (docs/tune.md "Prior and order") on tune documents whose
# answers are known: a prior that orders the times exactly (rho 1, the fastest
# measured first, the first quarter holds the best), one that orders them backwards,
# one that ties every candidate; the incumbent, the neighbour and failed candidates
# left out; a seeded random quarter (the same output twice); bad input exits 2.
# usage: bash test_prior_order.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$2
S=$SRC/scripts/tune-prior-order
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
tmp=$(mktemp -d /tmp/tsr_prior_order.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
has() { grep -qF -- "$2" "$1" || fail "$3: no '$2' in: $(cat "$1")"; }

# doc NAME MODE: 12 search candidates in the order measured (the document's order),
# prior p_i, time t_i; MODE up: t = 100 + i (the prior's order), down: t = 200 - i,
# tied: one prior, t = 100 + (5 i mod 12). Plus an incumbent faster than all (left
# out), a neighbour, and a failed search candidate with no time.
doc() {
  python3 - "$tmp/$1" "$2" <<'EOF'
import json, sys
path, mode = sys.argv[1], sys.argv[2]
c = [{"role": "incumbent", "status": "ok", "prior": 9.0, "time_ns": 1.0, "plan": "inc"},
     {"role": "neighbour", "status": "ok", "prior": 0.5, "time_ns": 2.0, "plan": "nb"}]
for i in range(12):
    t = {"up": 100.0 + i, "down": 200.0 - i, "tied": 100.0 + (5 * i) % 12}[mode]
    p = 1.0 if mode == "tied" else 1.0 + i
    c.append({"role": "search", "status": "ok", "prior": p, "time_ns": t, "plan": "s%d" % i})
c.append({"role": "search", "status": "failed", "prior": 0.1, "plan": "bad"})
json.dump({"candidates": c}, open(path, "w"))
EOF
}
mkdir -p "$tmp/up" "$tmp/down" "$tmp/tied" "$tmp/empty"
( cd "$tmp" && doc up/tune_cuda_8x8x8.json up && doc down/tune_cuda_9x9x9.json down &&
  doc tied/tune_cuda_7x7x7.json tied ) || { echo "FAIL: writing the documents"; exit 1; }

# ---- exact order: rho 1, fastest first, the first quarter (3 of 12) holds the best
python3 "$S" --per-doc "$tmp/up" >"$tmp/o" 2>"$tmp/e" || fail "up: exit $?: $(cat "$tmp/e")"
has "$tmp/o" "documents 1 of 1" "up"
has "$tmp/o" "n= 12 priors  12 rho=+1.00 fastest at 0.00 first quarter 1.000" "up (per document)"
has "$tmp/o" "Spearman rho, prior against time: median 1.00" "up"
has "$tmp/o" "distinct prior values / candidates: median 1.00" "up"
has "$tmp/o" "best of the first quarter measured / best of all: median 1.000, mean 1.000" "up"

# ---- backwards: rho -1, fastest last, the first quarter's best 198 / 189 ----------
python3 "$S" --per-doc "$tmp/down/tune_cuda_9x9x9.json" >"$tmp/o" 2>"$tmp/e" || fail "down: exit $?"
has "$tmp/o" "rho=-1.00 fastest at 1.00 first quarter 1.048" "down"

# ---- every prior tied: rho 0, one distinct value of 12 ---------------------------
python3 "$S" --per-doc "$tmp/tied" >"$tmp/o" 2>"$tmp/e" || fail "tied: exit $?"
has "$tmp/o" "priors   1 rho=+0.00" "tied"
has "$tmp/o" "distinct prior values / candidates: median 0.08" "tied"

# ---- the random quarter is seeded: the same figures twice; never under 1 ---------
python3 "$S" "$tmp/up" "$tmp/down" "$tmp/tied" >"$tmp/r1" 2>&1
python3 "$S" "$tmp/up" "$tmp/down" "$tmp/tied" >"$tmp/r2" 2>&1
cmp -s "$tmp/r1" "$tmp/r2" || fail "two runs differ: $(diff "$tmp/r1" "$tmp/r2")"
has "$tmp/r1" "documents 3 of 3" "three folders"
python3 - "$tmp/r1" <<'EOF' || fail "random quarter: $(grep random "$tmp/r1")"
import re, sys
line = [l for l in open(sys.argv[1]) if l.startswith("best of a random quarter")][0]
med, mean = map(float, re.findall(r"(\d+\.\d+)", line))
sys.exit(0 if 1.0 <= med <= 1.1 and 1.0 <= mean <= 1.1 else 1)
EOF

# ---- bad input: exit 2 with one line naming it -----------------------------------
expect2() { # description, args...
  local what=$1
  shift
  python3 "$S" "$@" >"$tmp/o" 2>"$tmp/e"
  local rc=$?
  [ "$rc" = 2 ] || fail "$what: exit $rc, want 2"
  [ -s "$tmp/e" ] || fail "$what: no message"
}
expect2 "no such path" "$tmp/nope"
grep -qF "$tmp/nope" "$tmp/e" || fail "no such path: the message does not name it: $(cat "$tmp/e")"
expect2 "an empty folder" "$tmp/empty"
expect2 "--min 3" --min 3 "$tmp/up"
expect2 "--draws 0" --draws 0 "$tmp/up"
expect2 "too few candidates" --min 13 "$tmp/up"
echo '{"candidates": [' >"$tmp/empty/tune_cuda_1x1x1.json"
expect2 "a broken document" "$tmp/empty"
grep -qF "tune_cuda_1x1x1.json" "$tmp/e" || fail "broken document: not named: $(cat "$tmp/e")"
echo '[1, 2]' >"$tmp/empty/tune_cuda_1x1x1.json"
expect2 "a JSON list, not a document" "$tmp/empty"
grep -qF "not a tune document" "$tmp/e" || fail "JSON list: $(cat "$tmp/e")"

[ "$fails" = 0 ] && echo "test_prior_order: all checks passed"
[ "$fails" = 0 ]
