#!/usr/bin/env python3
"""Issue 33's agreement check of a catalog summary with its planet table.

    python3 bench/catalog_agreement.py SUMMARY.csv [--status converged]

A planet agrees when its fitted P and K are each within 3 sigma (sigma: half the 16-84% range)
or 10% of planets.csv's (the summary's table_period_d and table_K_ms columns). Prints the counts
by status and each disagreeing planet with its R-hat, so the outliers can be explained.
"""
import argparse
import csv
import math
import sys


def agrees(fit, lo, hi, table):
    if not all(math.isfinite(v) for v in (fit, lo, hi, table)):
        return False
    sigma = 0.5 * (hi - lo)
    return abs(fit - table) <= max(3 * sigma, 0.1 * abs(table))


def number(row, key):
    try:
        return float(row[key])
    except (KeyError, ValueError):
        return math.nan


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("summary")
    ap.add_argument("--status", help="only planets of targets with this status (e.g. converged)")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.summary)))
    planets = [r for r in rows if r.get("planet") and math.isfinite(number(r, "period_d"))]
    if a.status:
        planets = [r for r in planets if r["status"] == a.status]
    if not planets:
        print("no fitted planets in", a.summary)
        return 1
    by_status = {}
    off = []
    for r in planets:
        p_ok = agrees(number(r, "period_d"), number(r, "period_d_16"), number(r, "period_d_84"), number(r, "table_period_d"))
        k_ok = agrees(number(r, "K_ms"), number(r, "K_ms_16"), number(r, "K_ms_84"), number(r, "table_K_ms"))
        n, good = by_status.get(r["status"], (0, 0))
        by_status[r["status"]] = (n + 1, good + (p_ok and k_ok))
        if not (p_ok and k_ok):
            off.append((r, p_ok, k_ok))
    total = sum(n for n, _ in by_status.values())
    good = sum(g for _, g in by_status.values())
    print(f"planets: {total}; P and K within 3 sigma or 10% of the table: {good} ({100.0 * good / total:.1f}%)")
    for s, (n, g) in sorted(by_status.items()):
        print(f"  {s}: {g} of {n}")
    print(f"P off: {sum(1 for _, p, _ in off if not p)}; K off with P right: {sum(1 for _, p, k in off if p and not k)}")
    for r, p_ok, k_ok in off:
        print(f"  {r['target']} {r['planet']} ({r['status']}, R-hat {number(r, 'worst_rhat'):.3g}): "
              f"P {number(r, 'period_d'):.6g} [{number(r, 'period_d_16'):.6g}, {number(r, 'period_d_84'):.6g}] "
              f"table {number(r, 'table_period_d'):.6g}; K {number(r, 'K_ms'):.4g} "
              f"[{number(r, 'K_ms_16'):.4g}, {number(r, 'K_ms_84'):.4g}] table {number(r, 'table_K_ms'):.4g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
