#!/usr/bin/env python3
"""Summarise an Nsight Compute source page (bench/gpu_profile.sh: ncu --page source --csv
--print-source sass): executed warp instructions by opcode, stall reasons, local-memory
instructions in the hot loop, and the hottest stretches of SASS.

    python3 bench/sass_profile.py b7_source.csv [--show START:END]
"""
import argparse
import collections
import csv
import gzip
import re


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    rows, header = [], None
    with opener(path, "rt") as f:
        for line in csv.reader(f):
            if len(line) > 5 and line[0] == "Address":
                header = line
            elif len(line) > 5 and line[0].startswith("0x"):
                rows.append(line)
    return header, rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("--show", help="print SASS lines START:END with executed counts and samples")
    args = parser.parse_args()
    header, rows = read(args.csv)
    col = {h: i for i, h in enumerate(header)}
    executed = [int(r[col["Instructions Executed"]] or 0) for r in rows]
    samples = [int(r[col["Warp Stall Sampling (All Samples)"]] or 0) for r in rows]
    total, total_samples = sum(executed), sum(samples)
    print(f"{len(rows)} SASS instructions, {total} warp instructions executed, {total_samples} stall samples")
    by_op, by_op_samples = collections.Counter(), collections.Counter()
    for r, e, s in zip(rows, executed, samples):
        text = re.sub(r"^@!?U?P\w+\s+", "", r[col["Source"]].strip())
        op = text.split()[0] if text else "?"
        by_op[op] += e
        by_op_samples[op] += s
    print("opcode: share of executed instructions, share of stall samples")
    for op, n in by_op.most_common(25):
        print(f"  {op:18s} {n / total:6.3f} {by_op_samples[op] / total_samples:6.3f}")
    stalls = collections.Counter()
    for h in header:
        if h.startswith("stall_") and "Not Issued" not in h:
            stalls[h[6:]] = sum(int(r[col[h]] or 0) for r in rows)
    n = sum(stalls.values())
    print("stall reasons:", ", ".join(f"{k} {v / n:.3f}" for k, v in stalls.most_common(10)))
    hottest = max(executed)
    local = [(k, e, r[col["Source"]].strip()) for k, (r, e) in enumerate(zip(rows, executed))
             if e >= hottest // 2 and re.search(r"\b(LDL|STL)", r[col["Source"]])]
    print(f"local-memory instructions executed on every step (>= half the hottest count): {len(local)}")
    blocks = collections.Counter()
    block_samples = collections.Counter()
    for k, (e, s) in enumerate(zip(executed, samples)):
        blocks[k // 100] += e
        block_samples[k // 100] += s
    print("hottest stretches of 100 instructions: first index, executed share, samples share")
    for b, e in blocks.most_common(12):
        print(f"  {b * 100:6d} {e / total:6.3f} {block_samples[b] / total_samples:6.3f}")
    if args.show:
        a, b = (int(x) for x in args.show.split(":"))
        for k in range(a, min(b, len(rows))):
            print(k, str(executed[k]).rjust(10), str(samples[k]).rjust(6), rows[k][col["Source"]].strip())


if __name__ == "__main__":
    main()
