#!/usr/bin/env bash
# The BLAS shim under Python's multiprocessing with the fork start method:
# the parent (ctypes, libtessera_blas.so) makes a multi-threaded cblas_sgemm,
# then a pool of forked workers each make their own and return checks of
# the result. Before the CPU pool was fork-safe the workers hung forever on
# their first multi-threaded call (the parent's pool threads do not exist in
# a child). Skips (77) without python3, in a sanitizer build, or on one CPU.
# Usage: bash test_blas_fork.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
shim="$build/libtessera_blas.so"
[ -f "$shim" ] || { echo "FAIL: $shim not built"; exit 1; }
if ! command -v python3 >/dev/null; then
  echo "SKIP: python3 not found"
  exit 77
fi
# An ASan- or TSan-built shim cannot be loaded into an uninstrumented python3 (the
# sanitizer runtime must come first); the fork paths run under it in test_blas_shim.
# (not `ldd | grep -q`: see test_blas_preload.sh)
deps=$(ldd "$shim")
if [[ $deps == *libasan* || $deps == *libtsan* ]]; then
  echo "SKIP: sanitizer build (the fork tests of test_blas_shim cover it)"
  exit 77
fi
if [ "$(getconf _NPROCESSORS_ONLN)" -lt 2 ]; then
  echo "SKIP: one online CPU: the shim never starts a pool thread, nothing to fork"
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/fork_client.py" <<'EOF'
import ctypes, multiprocessing as mp, os, sys

N = 192  # 2*N^3 flops is above the CPU backend's serial threshold: two threads
lib = ctypes.CDLL(sys.argv[1])
lib.cblas_sgemm.restype = None
lib.cblas_sgemm.argtypes = [ctypes.c_int] * 6 + [
    ctypes.c_float, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
    ctypes.c_float, ctypes.c_void_p, ctypes.c_int]


def threads():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return -1


def check(seed):
    """One column-major N^3 sgemm (alpha -1.5, beta 0.5) on dyadic inputs,
    where FP32 is exact: 256 elements against a dot product, and the sum of
    all of C against the closed form (also exact). Returns the mismatches
    and this process's thread count after the call."""
    fa = ctypes.c_float * (N * N)
    a = fa(*[((i * 7 + seed) % 9 - 4) / 8 for i in range(N * N)])
    b = fa(*[((i * 5 + seed * 3) % 11 - 5) / 8 for i in range(N * N)])
    c0 = [(i % 7 - 3) / 4 for i in range(N * N)]
    c = fa(*c0)
    lib.cblas_sgemm(102, 111, 111, N, N, N, -1.5, a, N, b, N, 0.5, c, N)
    bad = 0
    for t in range(256):
        i, j = (t * 37 + seed) % N, (t * 53 + 11 * seed) % N
        s = sum(a[l * N + i] * b[j * N + l] for l in range(N))
        bad += c[j * N + i] != -1.5 * s + 0.5 * c0[j * N + i]
    # sum of A*B = sum over l of (row l of B summed) * (column l of A summed)
    acol = [sum(a[l * N:(l + 1) * N]) for l in range(N)]
    brow = [sum(b[j * N + l] for j in range(N)) for l in range(N)]
    total = -1.5 * sum(x * y for x, y in zip(acol, brow)) + 0.5 * sum(c0)
    bad += sum(c) != total
    return bad, threads()


def worker(seed):
    return (os.getpid(),) + check(seed)


if __name__ == "__main__":
    bad, t = check(1)
    if bad or t < 2:
        sys.exit(f"parent: {bad} wrong, {t} thread(s) after a two-thread call")
    ctx = mp.get_context("fork")
    with ctx.Pool(2) as pool:
        try:
            res = pool.map_async(worker, range(2, 8)).get(timeout=120)
        except mp.TimeoutError:
            sys.exit("FAIL: the forked workers hung (no result within 120 s)")
    for pid, bad, t in res:
        if bad or t < 2:
            sys.exit(f"FAIL: worker {pid}: {bad} wrong, {t} thread(s) after a two-thread call")
    if any(r[0] == os.getpid() for r in res):
        sys.exit("FAIL: the calls did not run in forked workers")
    bad, t = check(9)  # the parent's pool after the forks
    if bad:
        sys.exit(f"FAIL: parent after fork: {bad} wrong")
    print(f"forked workers: {len(res)} calls, exact, each on {min(r[2] for r in res)}+ threads")
EOF

# the outer limit only guards the pool's own teardown; the 120 s one reports
rc=0
TESSERA_TUNE_DB=off timeout 300 python3 -W ignore::DeprecationWarning "$tmp/fork_client.py" \
  "$shim" >"$tmp/out" 2>"$tmp/err" || rc=$?
cat "$tmp/out"
if [ $rc -ne 0 ]; then
  [ $rc -eq 124 ] && echo "FAIL: timed out after 300 s"
  echo "FAIL: python3 exited $rc; its stderr:"
  tail -20 "$tmp/err"
  exit 1
fi
echo "PASS"
