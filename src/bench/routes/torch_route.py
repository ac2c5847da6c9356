#!/usr/bin/env python3
"""torch route of `tessera bench` (docs/protocol.md).

Run by the bench-run child process with the machine's python3:
    torch_route.py --probe
        prints {"available": bool, "reason": str|null, "versions": {...}}
    torch_route.py --zygote SOCKET
        imports torch once (never CUDA) and serves the measurement requests
        below by forking a fresh process for each (see zygote())
    torch_route.py --m M --n N --k K [--batch B --op-a N|T --op-b N|T --alpha A
                   --beta B --inputs dyadic|random|normal|wide --seed S --samples N
                   --sample-ms T --warmup-ms T --tf32 --accuracy-inputs KIND
                   --accuracy-seed S --out-accuracy FILE] --out-before FILE --out-after FILE
        prints {"ok": true, "calibration": {...}, "metrics": {...}, "versions": {...}}
        and writes the complete FP32 output (compact, batch*m*n) of one
        validated call before and one after timing (and, with
        --out-accuracy, one on the accuracy family's inputs); the C side
        validates them against the FP64 oracle with the same validator as
        every other route.

torch.mm(a, b, out=c) (torch.bmm for batches; addmm_/baddbmm_ when alpha != 1
or beta != 0) on CUDA with torch.backends.cuda.matmul.allow_tf32 = False (True with --tf32).
Inputs are generated on the device by exactly the formulas of
src/core/inputs.c, vectorized:
  dyadic: v = (((r*ca + c*cb + batch*cd) mod q) - o) / 8 per tensor
  random: idx = (batch * 2^32 + r) * cols + c (uint64, wrapping)
          x = splitmix64(seed ^ splitmix64(idx ^ ((t + 1) << 60)))
          v = (x >> 40) * 2^-23 - 1
  normal, wide: further draws of the same element (draw() below), exact
          integer and power-of-two arithmetic, one rounding to float32
uint64 arithmetic is done on int64 tensors: addition, multiplication and xor
wrap identically in two's complement; logical right shifts mask off the sign
extension. Metrics (ns, calls per sample) follow the C runner exactly.
"""
import argparse
import json
import os
import struct
import sys
import time

DYADIC = {0: (7, 3, 5, 17, 8), 1: (5, 11, 3, 13, 6), 2: (3, 7, 11, 9, 4)}
MASK64 = (1 << 64) - 1


def s64(u):
    """uint64 constant → the int64 with the same bits."""
    u &= MASK64
    return u - (1 << 64) if u >= (1 << 63) else u


def probe():
    out = {"available": False, "reason": None, "versions": {}}
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "absent"
        out["reason"] = "import torch failed: %s" % (e,)
        return out
    out["versions"]["torch"] = torch.__version__
    out["versions"]["torch_cuda"] = torch.version.cuda
    if not torch.cuda.is_available():
        out["reason"] = "torch %s: torch.cuda.is_available() is False" % torch.__version__
        return out
    out["versions"]["torch_device"] = torch.cuda.get_device_name(0)
    out["versions"]["torch_cublas"] = None
    out["available"] = True
    return out


def lsr(x, s):
    """Logical right shift of int64 bits (tensor or I64)."""
    return (x >> s) & ((1 << (64 - s)) - 1)


def splitmix64(x):
    x = x + s64(0x9E3779B97F4A7C15)
    x = (x ^ lsr(x, 30)) * s64(0xBF58476D1CE4E5B9)
    x = (x ^ lsr(x, 27)) * s64(0x94D049BB133111EB)
    return x ^ lsr(x, 31)


def pow2(e):
    """2^e, exactly, for integral float64 e (a torch tensor: built from the
    exponent bits, since pow() need not be exact)."""
    if hasattr(e, "view"):
        import torch
        return ((e.to(torch.int64) + 1023) << 52).view(torch.float64)
    return 2.0 ** e


def draw(t, seed, idx, family, i):
    """Draw i of the family's stream for element idx of tensor t (draw() in
    src/core/inputs.c): family 0 draw 0 is the original random stream."""
    base = splitmix64(idx ^ ((t + 1) << 60))
    if family == 0 and i == 0:
        return splitmix64(base ^ s64(seed))
    return splitmix64(base ^ s64(seed) ^ s64(family << 56) ^ s64(i * 0x9E3779B97F4A7C15))


def element_values(t, kind, seed, b, r, c, cols, to_f64):
    """Value of stored element (b, r, c) of tensor t (0 A, 1 B, 2 C) as FP64,
    before the one rounding to float32, from int64 operands b, r, c
    (broadcast tensors, or I64 scalars in the self-check); to_f64 converts
    int64 to float64."""
    if kind == "dyadic":
        ca, cb, cd, q, o = DYADIC[t]
        v = (r * ca + c * cb + b * cd) % q
        return (to_f64(v) - o) / 8.0
    idx = (b * (1 << 32) + r) * cols + c
    if kind == "normal":  # Irwin-Hall: 12 uniforms of 24 bits, exact integer sum, minus 6
        total = lsr(draw(t, seed, idx, 2, 0), 40)
        for i in range(1, 12):
            total = total + lsr(draw(t, seed, idx, 2, i), 40)
        return to_f64(total) * (1.0 / 16777216.0) - 6.0
    if kind == "wide":  # uniform [-1, 1) of 24 bits times 2^e, e in [-20, 20]
        u = to_f64(lsr(draw(t, seed, idx, 3, 0), 40)) * (1.0 / 8388608.0) - 1.0
        e = to_f64(lsr(draw(t, seed, idx, 3, 1), 32) % 41) - 20.0
        return u * pow2(e)
    return to_f64(lsr(draw(t, seed, idx, 0, 0), 40)) * (1.0 / 8388608.0) - 1.0


def generate(torch, t, kind, seed, batch, rows, cols, dev):
    """Stored tensor t as float32 [batch, rows, cols] on dev."""
    b = torch.arange(batch, dtype=torch.int64, device=dev).view(batch, 1, 1)
    r = torch.arange(rows, dtype=torch.int64, device=dev).view(1, rows, 1)
    c = torch.arange(cols, dtype=torch.int64, device=dev).view(1, 1, cols)
    v = element_values(t, kind, seed, b, r, c, cols, lambda x: x.to(torch.float64))
    return v.expand(batch, rows, cols).to(torch.float32).contiguous()


class I64:
    """int64 with two's-complement wrapping, as torch int64 tensors behave;
    lets the self-check run element_values without torch."""

    def __init__(self, v):
        v &= MASK64
        self.v = v - (1 << 64) if v >= (1 << 63) else v

    @staticmethod
    def _v(o):
        return o.v if isinstance(o, I64) else o

    def __add__(self, o):
        return I64(self.v + I64._v(o))

    def __mul__(self, o):
        return I64(self.v * I64._v(o))

    def __xor__(self, o):
        return I64(self.v ^ I64._v(o))

    def __and__(self, o):
        return I64(self.v & I64._v(o))

    def __rshift__(self, s):
        return I64(self.v >> s)  # arithmetic, like torch

    def __mod__(self, q):
        return I64(self.v % q)  # operands are non-negative here

    __radd__, __rmul__, __rxor__ = __add__, __mul__, __xor__


def self_check_values():
    """stdin lines "t kind seed batch r c cols" → float.hex of the value."""
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        t, kind, seed = int(f[0]), f[1], int(f[2])
        b, r, c, cols = (I64(int(x)) for x in f[3:7])
        v = element_values(t, kind, seed, b, r, c, cols.v, lambda x: float(x.v))
        v = struct.unpack("f", struct.pack("f", v))[0]  # the one rounding to float32
        print(float(v).hex())


def measure(a):
    import torch

    # strict: no TF32 anywhere (the class of cuBLAS pedantic); --tf32: the
    # TF32 class's peer (allow_tf32, matmul precision "high")
    torch.backends.cuda.matmul.allow_tf32 = bool(a.tf32)
    torch.backends.cudnn.allow_tf32 = bool(a.tf32)
    if hasattr(torch, "set_float32_matmul_precision"):
        torch.set_float32_matmul_precision("high" if a.tf32 else "highest")
    dev = torch.device("cuda")
    B, M, N, K = a.batch, a.m, a.n, a.k
    ar, ac = (M, K) if a.op_a == "N" else (K, M)
    br, bc = (K, N) if a.op_b == "N" else (N, K)
    A = generate(torch, 0, a.inputs, a.seed, B, ar, ac, dev)
    Bm = generate(torch, 1, a.inputs, a.seed, B, br, bc, dev)
    opA = A if a.op_a == "N" else A.transpose(1, 2)
    opB = Bm if a.op_b == "N" else Bm.transpose(1, 2)
    C0 = generate(torch, 2, a.inputs, a.seed, B, M, N, dev) if a.beta != 0.0 else None
    C = torch.empty((B, M, N), dtype=torch.float32, device=dev)
    plain = a.alpha == 1.0 and a.beta == 0.0
    if B == 1:
        opA2, opB2, C2 = opA[0], opB[0], C[0]
        if plain:
            def call():
                torch.mm(opA2, opB2, out=C2)
        else:
            def call():
                C2.addmm_(opA2, opB2, beta=a.beta, alpha=a.alpha)
    else:
        if plain:
            def call():
                torch.bmm(opA, opB, out=C)
        else:
            def call():
                C.baddbmm_(opA, opB, beta=a.beta, alpha=a.alpha)

    def reset_c():
        if C0 is not None:
            C.copy_(C0)
        else:
            C.fill_(float("nan"))

    def validated_call(path):
        reset_c()
        call()
        torch.cuda.synchronize()
        write_output(torch, C, path)

    def launch(n):
        for _ in range(n):
            call()

    sync = torch.cuda.synchronize
    validated_call(a.out_before)

    # Warm-up with doubling batches; the last batch's per-call host time sets n.
    warm_ns, win_ns = a.warmup_ms * 1000000, a.sample_ms * 1000000
    start = time.monotonic_ns()
    calls = batches = 0
    k = 1
    while True:
        t0 = time.monotonic_ns()
        launch(k)
        sync()
        t1 = time.monotonic_ns()
        calls += k
        batches += 1
        per_call = max(1, (t1 - t0) // k)
        if t1 - start >= warm_ns:
            break
        k = max(1, min(k * 2, (warm_ns - (t1 - start)) // per_call, 1 << 24))
    n = max(1, min(-(-win_ns // per_call), 1 << 24))
    calibration = {"warmup_calls": calls, "warmup_batches": batches,
                   "warmup_ns": time.monotonic_ns() - start, "est_call_ns": per_call,
                   "calls_per_batch": n}

    def events(count):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        sync()
        e0.record()
        launch(count)
        e1.record()
        e1.synchronize()
        return int(round(e0.elapsed_time(e1) * 1e6))  # ms → ns

    def host(count):
        sync()
        t0 = time.monotonic_ns()
        launch(count)
        sync()
        return time.monotonic_ns() - t0

    metrics = {}
    for name, fn, count in (("gpu_batch", events, n), ("e2e_batch", host, n),
                            ("gpu_single", events, 1), ("e2e_single", host, 1)):
        samples = []
        for _ in range(a.samples):
            reset_c()
            sync()
            samples.append({"ns": fn(count), "calls": count})
        metrics[name] = samples
    validated_call(a.out_after)
    if a.accuracy_inputs and a.out_accuracy:
        # the same call on the accuracy family's inputs (docs/accuracy.md)
        A.copy_(generate(torch, 0, a.accuracy_inputs, a.accuracy_seed, B, ar, ac, dev))
        Bm.copy_(generate(torch, 1, a.accuracy_inputs, a.accuracy_seed, B, br, bc, dev))
        if C0 is not None:
            C0.copy_(generate(torch, 2, a.accuracy_inputs, a.accuracy_seed, B, M, N, dev))
        validated_call(a.out_accuracy)
    versions = probe()["versions"]
    return {"ok": True, "calibration": calibration, "metrics": metrics, "versions": versions}


def write_output(torch, C, path):
    """Raw little-endian float32, compact [batch, m, n], without numpy: a
    file-backed CPU tensor (created by from_file with shared=True)."""
    f = torch.from_file(path, shared=True, size=C.numel(), dtype=torch.float32)
    f.copy_(C.reshape(-1))
    del f


def zygote(sock_path):
    """Serve measurement requests by forking a fresh process per request.

    Interpreter start and `import torch` cost seconds per row; CUDA is never
    touched here, so each forked child still creates its own CUDA context, as
    a fresh `python3 torch_route.py ...` would. Protocol (docs/protocol.md):
    the client connects to sock_path and sends one JSON line {"argv": [...]}
    with its stderr descriptor attached (SCM_RIGHTS); the child runs main()
    with that argv, stdout on the connection and stderr on the descriptor;
    after the child exits the zygote appends one line
    {"zygote": {"pid", "child_pid", "exit_code", "signal"}} and closes. A
    client that hangs up (killed at its timeout) gets its child killed. The
    zygote exits when its stdin reaches EOF (the orchestrator's end)."""
    import select
    import signal
    import socket

    try:  # never outlive the orchestrator
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort, stdin EOF is the contract
        pass
    t0 = time.monotonic_ns()
    try:
        import torch  # noqa: F401 - imported once, inherited by every child
        imported, why = True, None
    except Exception as e:  # noqa: BLE001 - children report the failure per row
        imported, why = False, "%s: %s" % (type(e).__name__, e)
    import_ns = time.monotonic_ns() - t0
    if os.path.exists(sock_path):
        os.unlink(sock_path)
    lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lst.bind(sock_path)
    lst.listen(4)
    print(json.dumps({"ready": True, "pid": os.getpid(), "torch_imported": imported,
                      "import_error": why, "import_ns": import_ns}), flush=True)
    stdin = sys.stdin.fileno()
    while True:
        r, _, _ = select.select([lst, stdin], [], [])
        if stdin in r and not os.read(stdin, 4096):
            break
        if lst not in r:
            continue
        conn, _ = lst.accept()
        try:
            serve_one(conn, lst)
        except Exception as e:  # noqa: BLE001 - one bad client never stops the zygote
            print("torch zygote: request failed: %s: %s" % (type(e).__name__, e),
                  file=sys.stderr, flush=True)
        finally:
            conn.close()
    lst.close()
    os.unlink(sock_path)
    return 0


def serve_one(conn, lst):
    import select
    import signal
    import socket

    data, fds, _, _ = socket.recv_fds(conn, 65536, 1)
    while not data.endswith(b"\n"):
        more = conn.recv(65536)
        if not more:
            break
        data += more
    req = json.loads(data.decode())
    argv = [str(x) for x in req["argv"]]
    pid = os.fork()
    if pid == 0:
        rc = 70
        try:
            try:
                import ctypes
                ctypes.CDLL(None).prctl(1, signal.SIGKILL)
            except Exception:  # noqa: BLE001
                pass
            lst.close()
            nul = os.open(os.devnull, os.O_RDONLY)
            os.dup2(nul, 0)
            os.dup2(conn.fileno(), 1)
            if fds:
                os.dup2(fds[0], 2)
            conn.close()
            sys.argv = [sys.argv[0]] + argv
            try:
                rc = main()
            except SystemExit as e:  # argparse errors, as a fresh python3 would exit
                rc = e.code if isinstance(e.code, int) else 1
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(rc if isinstance(rc, int) else 70)
    for fd in fds:
        os.close(fd)
    status = None
    while status is None:
        w, st = os.waitpid(pid, os.WNOHANG)
        if w == pid:
            status = st
            break
        r, _, _ = select.select([conn], [], [], 0.02)
        if r and not conn.recv(1, socket.MSG_PEEK):  # the client hung up
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
    trailer = {"zygote": {"pid": os.getpid(), "child_pid": pid,
                          "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                          "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None}}
    try:
        conn.sendall(("\n" + json.dumps(trailer) + "\n").encode())
    except OSError:
        pass


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--probe", action="store_true")
    p.add_argument("--zygote", metavar="SOCKET",
                   help="pre-import torch and fork one process per request on this socket")
    p.add_argument("--self-check-values", action="store_true",
                   help="read 't kind seed batch r c cols' lines, print each value (no torch needed)")
    p.add_argument("--m", type=int)
    p.add_argument("--n", type=int)
    p.add_argument("--k", type=int)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--op-a", choices=["N", "T"], default="N")
    p.add_argument("--op-b", choices=["N", "T"], default="N")
    p.add_argument("--alpha", type=float, default=1.0)
    p.add_argument("--beta", type=float, default=0.0)
    p.add_argument("--inputs", choices=["dyadic", "random", "normal", "wide"], default="dyadic")
    p.add_argument("--tf32", action="store_true", help="allow TF32 (the tf32 precision mode's peer)")
    p.add_argument("--accuracy-inputs", choices=["random", "normal", "wide"])
    p.add_argument("--accuracy-seed", type=int, default=1)
    p.add_argument("--out-accuracy")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--samples", type=int, default=5)
    p.add_argument("--sample-ms", type=int, default=20)
    p.add_argument("--warmup-ms", type=int, default=100)
    p.add_argument("--out-before")
    p.add_argument("--out-after")
    a = p.parse_args()
    if a.self_check_values:
        self_check_values()
        return 0
    if a.zygote:
        return zygote(a.zygote)
    if a.probe:
        out = probe()
        print(json.dumps(out))
        return 0
    if not (a.m and a.n and a.k and a.out_before and a.out_after):
        print(json.dumps({"ok": False, "error": "--m --n --k --out-before --out-after are required"}))
        return 2
    if os.environ.get("TSR_TORCH_TEST_HANG") == "1":  # test hook: a measurement that never ends
        while True:
            time.sleep(60)
    pr = probe()
    if not pr["available"]:
        print(json.dumps({"ok": False, "error": pr["reason"]}))
        return 3
    try:
        out = measure(a)
    except Exception as e:  # noqa: BLE001 - reported to the C side as the row's error
        print(json.dumps({"ok": False, "error": "%s: %s" % (type(e).__name__, e)}))
        return 4
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
