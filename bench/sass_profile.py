#!/usr/bin/env python3
"""Summarise an Nsight Compute source page (bench/gpu_profile.sh: ncu --page source --csv
--print-source sass): executed warp instructions by opcode, stall reasons, local-memory
instructions in the hot loop, the hottest stretches of SASS, and (--functions) the same by
function: the kernel's body and each out-of-line function (the targets of its CALLs), with how
often each is called.

    python3 bench/sass_profile.py b7_source.csv [--show START:END] [--functions]
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
    parser.add_argument("--functions", action="store_true", help="break the figures down by function")
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
    if args.functions:
        functions(header, rows, executed, samples)
    if args.show:
        a, b = (int(x) for x in args.show.split(":"))
        for k in range(a, min(b, len(rows))):
            print(k, str(executed[k]).rjust(10), str(samples[k]).rjust(6), rows[k][col["Source"]].strip())


def functions(header, rows, executed, samples):
    """Per function: SASS size, instructions run at least once, executed share, stall samples and
    their main reasons, and the calls into it (warp-level). Functions start at CALL targets."""
    col = {h: i for i, h in enumerate(header)}
    address = [int(r[col["Address"]], 16) for r in rows]
    starts = {address[0]: "kernel"}
    calls = collections.Counter()
    for r, e in zip(rows, executed):
        m = re.search(r"CALL\.\w+(?:\.\w+)*\s+`?\(?(0x[0-9a-f]+)", r[col["Source"]])
        if m:
            target = int(m.group(1), 16)
            starts.setdefault(target, f"+{target - address[0]:#x}")
            calls[target] += e
    order = sorted(starts)
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    total, total_samples = sum(executed), sum(samples)
    print("by function: start, SASS size, run at least once, executed share, samples share, calls, top stalls")
    k = 0
    for n, start in enumerate(order):
        end = order[n + 1] if n + 1 < len(order) else float("inf")
        size = ran = ex = sm = 0
        why = collections.Counter()
        while k < len(rows) and address[k] < end:
            size += 1
            ran += executed[k] > 0
            ex += executed[k]
            sm += samples[k]
            for h in reasons:
                why[h[6:]] += int(rows[k][col[h]] or 0)
            k += 1
        if ex == 0:
            continue
        top = ", ".join(f"{w} {v / max(sm, 1):.2f}" for w, v in why.most_common(3))
        print(f"  {starts[start]:>9s} {size:6d} {ran:6d} {ex / total:6.3f} {sm / total_samples:6.3f} "
              f"{calls[start]:9d}  {top}")


if __name__ == "__main__":
    main()
