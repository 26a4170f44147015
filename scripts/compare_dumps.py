#!/usr/bin/env python3
"""Compares two TIDAL_DUMP_DIR dumps of one plan op by op (docs/cuda.md,
"Finding a kernel that differs"):

    TIDAL_DUMP_DIR=gpu ./train ... --steps 1
    TIDAL_DEVICE=sim TIDAL_DUMP_DIR=ref ./train ... --steps 1
    python3 scripts/compare_dumps.py gpu ref [--tolerance 1e-5] [--all]

Each op's written bytes are read as float32 (other element types show as
bit differences) and compared by relative L2 error, ||a - b|| / ||b||, in
launch order (op index); ops.tsv names them. Prints the first op past
--tolerance (where a difference starts; later ops inherit it) and the ten
worst; --all prints every op. Exit status 1 when any op is past the
tolerance, 2 for unusable input.
"""
import argparse
import csv
import math
import os
import re
import sys
from array import array

FILE = re.compile(r"^op-(\d+)-w(\d+)\.bin$")


def load_ops(directory):
    names = {}
    path = os.path.join(directory, "ops.tsv")
    if os.path.isfile(path):
        with open(path, newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                names[int(row["index"])] = f"{row['name']} ({row['kind']})"
    return names


def files(directory):
    found = {}
    for name in os.listdir(directory):
        m = FILE.match(name)
        if m:
            found[(int(m.group(1)), int(m.group(2)))] = os.path.join(directory, name)
    return found


def rel_error(a_path, b_path):
    with open(a_path, "rb") as f:
        a = f.read()
    with open(b_path, "rb") as f:
        b = f.read()
    if len(a) != len(b):
        return math.inf, f"sizes differ: {len(a)} vs {len(b)} bytes"
    if a == b:
        return 0.0, "bitwise equal"
    if len(a) % 4:
        return math.inf, "bytes differ"
    fa, fb = array("f"), array("f")
    fa.frombytes(a)
    fb.frombytes(b)
    diff = sum((x - y) ** 2 for x, y in zip(fa, fb))
    ref = sum(y * y for y in fb)
    if math.isnan(diff):
        return math.inf, "NaN in one of them"
    err = math.sqrt(diff / ref) if ref > 0 else math.sqrt(diff)
    worst = max(range(len(fa)), key=lambda i: abs(fa[i] - fb[i]))
    return err, f"{len(fa)} floats, worst [{worst}]: {fa[worst]!r} vs {fb[worst]!r}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b", help="the reference")
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--all", action="store_true")
    args = ap.parse_args(argv)
    for d in (args.a, args.b):
        if not os.path.isdir(d):
            print(f"compare_dumps: {d}: not a directory", file=sys.stderr)
            return 2
    fa, fb = files(args.a), files(args.b)
    if not fa or not fb:
        print(f"compare_dumps: no op-*-w*.bin files in {args.a if not fa else args.b}", file=sys.stderr)
        return 2
    names = load_ops(args.b) or load_ops(args.a)
    only = sorted(set(fa) ^ set(fb))
    rows = []
    for key in sorted(set(fa) & set(fb)):
        err, what = rel_error(fa[key], fb[key])
        rows.append((key, err, what))
    label = lambda key: f"op {key[0]} write {key[1]}: {names.get(key[0], '?')}"  # noqa: E731
    bad = [r for r in rows if r[1] > args.tolerance]
    print(f"{len(rows)} outputs compared, {len(bad)} past {args.tolerance:g}"
          + (f"; {len(only)} in one dump only" if only else ""))
    if bad:
        key, err, what = bad[0]
        print(f"first past the tolerance: {label(key)}: {err:.3g} ({what})")
    if args.all:
        for key, err, what in rows:
            print(f"  {err:10.3g}  {label(key)}  {what}")
    else:
        for key, err, what in sorted(rows, key=lambda r: -r[1])[:10]:
            print(f"  {err:10.3g}  {label(key)}  {what}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
