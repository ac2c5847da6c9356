#!/usr/bin/env bash
# The torch zygote protocol (docs/protocol.md) without needing torch: a real
# `torch_route.py --zygote`, real `tessera bench-run --torch-zygote` clients.
# Where torch is absent (CI) each forked child reports "import torch failed"
# with exit 3; the test asserts on that exact outcome, on fresh child pids,
# on the child's stderr reaching the client, on a hung child killed when its
# client is killed, on an unreachable zygote, and on a clean exit at stdin EOF.
# Usage: bash test_torch_zygote.sh BUILD_DIR SOURCE_DIR
set -u
BUILD=$1
SRC=${TSR_SOURCE_DIR:-$2} # the environment wins: a build carried elsewhere
T=$BUILD/tessera
PY=$SRC/src/bench/routes/torch_route.py
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
if python3 -c 'import torch' 2>/dev/null; then
  echo "SKIP: torch importable here; the zygote is exercised by the device bench instead"
  exit 77
fi
tmp=$(mktemp -d /tmp/tsr_zygote.XXXXXX)
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

start_zygote() { # sock, extra env...
  local sock=$1
  shift
  mkfifo "$tmp/ctl.$$"
  env "$@" python3 "$PY" --zygote "$sock" <"$tmp/ctl.$$" >"$tmp/ready" 2>"$tmp/zlog" &
  zpid=$!
  exec 7>"$tmp/ctl.$$"
  rm -f "$tmp/ctl.$$"
  for _ in $(seq 100); do [ -s "$tmp/ready" ] && break; sleep 0.1; done
}
stop_zygote() {
  exec 7>&-
  for _ in $(seq 50); do kill -0 "$zpid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$zpid" 2>/dev/null; then
    fail "zygote still running 5 s after stdin EOF"
    kill -9 "$zpid"
  fi
  wait "$zpid" 2>/dev/null
}
trap 'exec 7>&- 2>/dev/null; kill $zpid 2>/dev/null; rm -rf "$tmp"' EXIT

sock=$tmp/z.sock
start_zygote "$sock"
[ "$(field "$tmp/ready" 'd["ready"]')" = True ] || fail "no ready line: $(cat "$tmp/ready" "$tmp/zlog")"
[ "$(field "$tmp/ready" 'd["torch_imported"]')" = False ] || fail "ready line claims torch"
[ -S "$sock" ] || fail "no socket at $sock"
zp=$(field "$tmp/ready" 'd["pid"]')
run() { # out-file
  "$T" bench-run --route torch --shape 8x8x8 --torch-zygote "$sock" --work-dir "$tmp" \
    --oracle-cache none >"$1" 2>"$1.err"
}
run "$tmp/r1"
run "$tmp/r2"
for r in r1 r2; do
  [ "$(field "$tmp/$r" 'd["status"]')" = error ] || fail "$r: status not error"
  [ "$(field "$tmp/$r" 'd["torch_process"]["mode"]')" = zygote-fork ] || fail "$r: mode"
  [ "$(field "$tmp/$r" 'd["torch_process"]["pid"]')" = "$zp" ] || fail "$r: zygote pid"
  [ "$(field "$tmp/$r" 'd["torch_process"]["exit_code"]')" = 3 ] || fail "$r: exit code not 3"
  field "$tmp/$r" 'd["error"]' | grep -q "forked by the zygote, wait status 768): import torch failed" ||
    fail "$r: error text: $(field "$tmp/$r" 'd["error"]')"
done
c1=$(field "$tmp/r1" 'd["torch_process"]["child_pid"]')
c2=$(field "$tmp/r2" 'd["torch_process"]["child_pid"]')
[ "$c1" != "$c2" ] && [ "$c1" != "$zp" ] || fail "child pids not fresh: $c1 $c2 (zygote $zp)"
# bad arguments reach the child's argparse; its stderr reaches the client's
python3 - "$sock" >"$tmp/bad" <<'PYEOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
socket.send_fds(s, [json.dumps({"argv": ["--m", "x"]}).encode() + b"\n"], [1])
out = b""
while True:
    b = s.recv(65536)
    if not b: break
    out += b
print(json.loads(out.decode().strip().splitlines()[-1])["zygote"]["exit_code"])
PYEOF
grep -q "invalid int value" "$tmp/bad" || fail "child stderr did not reach the client: $(cat "$tmp/bad")"
[ "$(tail -n1 "$tmp/bad")" = 2 ] || fail "argparse error: exit code $(tail -n1 "$tmp/bad"), want 2"
stop_zygote
[ -e "$sock" ] && fail "socket left behind after exit"

# a hung child is killed when its client goes away (the orchestrator's timeout)
start_zygote "$sock" TSR_TORCH_TEST_HANG=1
"$T" bench-run --route torch --shape 8x8x8 --torch-zygote "$sock" --work-dir "$tmp" \
  --oracle-cache none >"$tmp/h" 2>&1 &
cpid=$!
zp=$(field "$tmp/ready" 'd["pid"]')
children_of() { # pid: its child pids, from /proc (no procps needed)
  grep -l "^PPid:[[:space:]]*$1\$" /proc/[0-9]*/status 2>/dev/null | cut -d/ -f3
}
hung=""
for _ in $(seq 100); do
  hung=$(children_of "$zp")
  [ -n "$hung" ] && break
  sleep 0.1
done
[ -n "$hung" ] || fail "no forked child appeared"
kill -9 "$cpid"
wait "$cpid" 2>/dev/null
gone=0
for _ in $(seq 50); do kill -0 "$hung" 2>/dev/null || { gone=1; break; }; sleep 0.1; done
[ $gone = 1 ] || fail "hung child $hung survived its client"
stop_zygote

# unreachable zygote: a clear row error
"$T" bench-run --route torch --shape 8x8x8 --torch-zygote "$tmp/none.sock" --work-dir "$tmp" \
  --oracle-cache none >"$tmp/u" 2>/dev/null
field "$tmp/u" 'd["error"]' | grep -q "zygote unreachable" || fail "unreachable: $(field "$tmp/u" 'd.get("error")')"

[ $fails = 0 ] && echo "test_torch_zygote: ok" && exit 0
echo "test_torch_zygote: $fails failure(s)"
exit 1
