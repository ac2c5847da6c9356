#!/usr/bin/env python3
"""Compares two `tessera tune --show --json` listings (docs/tune.md,
"Scale-out"): the same keys, and the same plan for every key whose tune in
the reference (the first listing) was unambiguous: its tie set holds one
plan, so no other measured candidate came within the tie band of the
winner. Exit 0 when they agree and at least --min-unambiguous keys were
compared; 1 otherwise, naming the first difference.

usage: tune_compare.py REFERENCE.json OTHER.json [--min-unambiguous N]
"""
import json
import sys


def key(e):
    return (e["device"], e["arch"], e["driver"], e["nvrtc"], e["tessera_version"], e["backend"],
            e["m"], e["n"], e["k"], e["op_a"], e["op_b"], e["batch"], e["precision"])


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--min-unambiguous"):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    need = int(argv[4]) if len(argv) == 5 else 1
    ref, other = ({key(e): e for e in json.load(open(p))["tuned"]} for p in argv[1:3])
    if set(ref) != set(other):
        print("keys differ: only in %s: %s; only in %s: %s" % (
            argv[1], sorted(set(ref) - set(other)), argv[2], sorted(set(other) - set(ref))))
        return 1
    compared = 0
    for k, e in sorted(ref.items()):
        ties = e.get("tie_set") or []
        if len(ties) != 1:
            continue
        compared += 1
        if e["plan"] != other[k]["plan"]:
            print("key %s: %s has %s, %s has %s" % (k, argv[1], e["plan"], argv[2], other[k]["plan"]))
            return 1
    print("%d keys, %d unambiguous, same plans" % (len(ref), compared))
    if compared < need:
        print("only %d unambiguous keys compared, want at least %d" % (compared, need))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
