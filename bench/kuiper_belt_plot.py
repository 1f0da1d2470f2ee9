#!/usr/bin/env python3
"""The Kuiper belt of `nbody_bench belt` (issue 34): where the particles that survive are.

    python3 bench/kuiper_belt_plot.py belt.csv belt.png [YEARS]
    python3 bench/kuiper_belt_plot.py FOLDER belt.png      (a swarmfit nbody output folder with
                                                            particle_mode = tape: first and last
                                                            snapshots)

Left: eccentricity against semi-major axis, the start (grey) and the survivors at the end (blue);
the dashed lines are Neptune's mean-motion resonances (a = a_N (p/q)^(2/3), a_N = 30.069 AU,
the JPL mean element of the run's start). Middle: the survivors' semi-major axes against the
start's (uniform in 35-50 AU). Right (CSV with phi32 columns): the 3:2 resonant angle
phi = 3 lambda - 2 lambda_N - varpi of the particles at 39.0-39.8 AU, at the end and at the start,
and of a band outside the resonance: librators (Plutinos) gather about 180 degrees. Prints the
counts by status, the population near each resonance, and the phi statistics.
"""
import csv
import glob
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

A_NEPTUNE = 30.06896348
RESONANCES = {"4:3": 4 / 3, "3:2": 3 / 2, "5:3": 5 / 3, "7:4": 7 / 4, "2:1": 2.0}
STATUS = {0: "survived", 1: "escaped (r > 1000 AU)", 2: "inside 1 AU", 3: "close encounter"}


G = (0.01720209895 * 365.25) ** 2  # AU^3 / (solar mass yr^2), swarmfit's kSolarSystemG


def elements(x, v, mu):
    """Heliocentric a, e, i (degrees) from relative position and velocity."""
    r = math.sqrt(sum(c * c for c in x))
    v2 = sum(c * c for c in v)
    rv = sum(a * b for a, b in zip(x, v))
    h = (x[1] * v[2] - x[2] * v[1], x[2] * v[0] - x[0] * v[2], x[0] * v[1] - x[1] * v[0])
    e = [((v2 - mu / r) * x[k] - rv * v[k]) / mu for k in range(3)]
    hn = math.sqrt(sum(c * c for c in h))
    return 1 / (2 / r - v2 / mu), math.sqrt(sum(c * c for c in e)), math.degrees(math.acos(h[2] / hn))


def rows_from_folder(folder):
    import h5py

    snaps = sorted(glob.glob(os.path.join(folder, "snapshot_*.h5")))
    if len(snaps) < 2:
        sys.exit(f"{folder}: fewer than two snapshots")
    first, last = h5py.File(snaps[0], "r"), h5py.File(snaps[-1], "r")
    m = int(last.attrs["num_massive"])
    mu = G * float(last["mass"][0])
    status = last["status"][:] if "status" in last else [0] * len(last["id"])
    x0, u0 = first["position"][:].tolist(), first["velocity"][:].tolist()
    x1, u1 = last["position"][:].tolist(), last["velocity"][:].tolist()
    rows = []
    for k in range(m, len(x1)):
        r0 = [x0[k][d] - x0[0][d] for d in range(3)]
        v0 = [u0[k][d] - u0[0][d] for d in range(3)]
        r1 = [x1[k][d] - x1[0][d] for d in range(3)]
        v1 = [u1[k][d] - u1[0][d] for d in range(3)]
        a0, e0, _ = elements(r0, v0, mu)
        a1, e1, _ = elements(r1, v1, mu)
        rows.append({"status": status[k], "a0": a0, "e0": e0, "a": a1, "e": e1})
    return rows, f"{float(last.attrs['time']):g}"


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: kuiper_belt_plot.py belt.csv|FOLDER belt.png [YEARS]")
    if os.path.isdir(sys.argv[1]):
        rows, years = rows_from_folder(sys.argv[1])
    else:
        rows = list(csv.DictReader(open(sys.argv[1])))
        years = sys.argv[3] if len(sys.argv) > 3 else ""
    alive = [r for r in rows if int(r["status"]) == 0]
    counts = {}
    for r in rows:
        counts[int(r["status"])] = counts.get(int(r["status"]), 0) + 1
    for k in sorted(counts):
        print(f"{STATUS[k]}: {counts[k]}")
    # Scattered: stopped, or its semi-major axis moved by more than 1 AU, by starting semi-major axis.
    bins0 = {}
    for r in rows:
        k = int(float(r["a0"]))
        moved = int(r["status"]) != 0 or abs(float(r["a"]) - float(r["a0"])) > 1
        n, m = bins0.get(k, (0, 0))
        bins0[k] = (n + 1, m + moved)
    print("scattered (stopped or |a - a0| > 1 AU) by a0: " +
          ", ".join(f"{k}-{k + 1} AU {m / n:.3f}" for k, (n, m) in sorted(bins0.items()) if n >= 20))
    for name, ratio in RESONANCES.items():
        a_res = A_NEPTUNE * ratio ** (2 / 3)
        near0 = sum(1 for r in rows if abs(float(r["a0"]) - a_res) < 0.4)
        near = sum(1 for r in alive if abs(float(r["a"]) - a_res) < 0.4)
        print(f"{name} at {a_res:.2f} AU: {near0} within 0.4 AU at the start, {near} survivors there at the end")
    has_phi = "phi32_deg" in rows[0]
    fig, axes = plt.subplots(1, 3 if has_phi else 2, figsize=(18 if has_phi else 12, 4.8))
    ax1, ax2 = axes[0], axes[1]
    ax1.scatter([float(r["a0"]) for r in rows], [float(r["e0"]) for r in rows], s=1, c="0.8", label="start")
    ax1.scatter([float(r["a"]) for r in alive], [float(r["e"]) for r in alive], s=1, c="tab:blue",
                label=f"survivors ({len(alive)})")
    for name, ratio in RESONANCES.items():
        a_res = A_NEPTUNE * ratio ** (2 / 3)
        ax1.axvline(a_res, ls="--", lw=0.8, c="tab:red")
        ax1.text(a_res, 0.41, name, ha="center", fontsize=8, color="tab:red")
    qa = [33 + 0.1 * k for k in range(191)]
    ax1.plot(qa, [1 - A_NEPTUNE / a for a in qa], c="k", lw=0.8, ls=":", label="perihelion at Neptune's orbit")
    ax1.set(xlim=(33, 52), ylim=(0, 0.42), xlabel="a [AU]", ylabel="e",
            title=f"Kuiper belt after {years} yr" if years else "Kuiper belt")
    ax1.legend(loc="upper left", markerscale=6, fontsize=8)
    bins = [33 + 0.25 * k for k in range(77)]
    ax2.hist([float(r["a0"]) for r in rows], bins=bins, color="0.8", label="start")
    ax2.hist([float(r["a"]) for r in alive], bins=bins, color="tab:blue", alpha=0.8, label="survivors")
    for ratio in RESONANCES.values():
        ax2.axvline(A_NEPTUNE * ratio ** (2 / 3), ls="--", lw=0.8, c="tab:red")
    ax2.set(xlabel="a [AU]", ylabel="particles per 0.25 AU")
    ax2.legend(fontsize=8)
    if has_phi:
        band = [r for r in alive if 39.0 < float(r["a"]) < 39.8]
        start = [r for r in rows if 39.0 < float(r["a0"]) < 39.8]
        control = [r for r in alive if 40.5 < float(r["a"]) < 41.3]

        def near180(rs, key):
            return sum(1 for r in rs if abs(float(r[key]) - 180) < 60) / max(len(rs), 1)

        print(f"phi within 60 deg of 180: 3:2 band at the end {near180(band, 'phi32_deg'):.3f} ({len(band)}), "
              f"at the start {near180(start, 'phi32_0_deg'):.3f} ({len(start)}), "
              f"40.5-41.3 AU at the end {near180(control, 'phi32_deg'):.3f} ({len(control)}); uniform: 0.333")
        ax3 = axes[2]
        bins3 = list(range(0, 361, 10))
        ax3.hist([float(r["phi32_0_deg"]) for r in start], bins=bins3, histtype="step", color="0.5",
                 label="39.0-39.8 AU, start")
        ax3.hist([float(r["phi32_deg"]) for r in band], bins=bins3, histtype="step", color="tab:blue", lw=1.5,
                 label="39.0-39.8 AU, end")
        ax3.hist([float(r["phi32_deg"]) for r in control], bins=bins3, histtype="step", color="tab:orange",
                 label="40.5-41.3 AU, end")
        ax3.set(xlim=(0, 360), xlabel="3:2 resonant angle 3 lambda - 2 lambda_N - varpi [deg]",
                ylabel="particles per 10 deg")
        ax3.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)


if __name__ == "__main__":
    main()
