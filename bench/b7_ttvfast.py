#!/usr/bin/env python3
"""B7 (design/BENCHMARKS.md): one Kepler-9 RV + transit-time likelihood on one CPU core, swarmfit
against TTVFast (PyPI ttvfast), measured in one run on one machine, then swarmfit's batched
evaluations per second (`swarmfit bench --only B7`).

TTVFast gets the same system (tests/fixtures/kepler9/params.csv converted as in
tests/fixtures/make_kepler9_fixtures.py, astrocentric Cartesian input), the same step (the
shortest period / 20), the same span and the 30 HARPS-N RV times; a TTVFast "likelihood" is its
call plus the chi^2 of its transit times and RVs against the data in numpy (the minimum any
TTVFast + emcee fit pays per model).

    python3 bench/b7_ttvfast.py [path/to/swarmfit] [--systems N] [--backend cpu|cuda|auto]
    # on the device machine (bench/gpu_bundle_data.sh puts the data and config in .gpu/kepler9):
    python3 bench/b7_ttvfast.py ".gpu/run swarmfit" --backend cuda --data .gpu/kepler9 \
        --config .gpu/kepler9/kepler9.cfg
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import time

import numpy as np
import ttvfast

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures"))
import make_kepler9_fixtures as k9  # noqa: E402

DATA = os.path.join(ROOT, "..", "shared", "data", "Kepler-9")


def load_data(folder=DATA):
    rv = np.loadtxt(os.path.join(folder, "obsRV.dat"), comments="#")
    transits = {}
    for name, file in (("b", "NB2_observations.dat"), ("c", "NB3_observations.dat")):
        table = np.loadtxt(os.path.join(folder, file), comments="#", usecols=(0, 1, 2))
        transits[name] = table
    return rv, transits


def ttvfast_likelihood(params, rv, transits):
    positions, model_rv = ttvfast._ttvfast_fn(params, k9.STEP, k9.T_REF, k9.T_END, 2, 2, len(rv), list(rv[:, 0]))
    times = np.asarray(positions[2])
    filled = times != -2.0  # unfilled slots of TTVFast's transit array
    planet = np.asarray(positions[0])[filled]
    epoch = np.asarray(positions[1])[filled]
    times = times[filled]
    chi2 = 0.0
    for p, name in enumerate("bc"):
        model = times[planet == p]
        ep = epoch[planet == p]
        data = transits[name]
        # TTVFast numbers transits from 0 after t0; the data's epochs start at the same transit.
        index = np.searchsorted(ep, data[:, 0].astype(int))
        index = np.clip(index, 0, len(model) - 1)
        chi2 += np.sum(((model[index] - data[:, 1]) / data[:, 2]) ** 2)
    residual = rv[:, 1] - np.asarray(model_rv) * k9.AU_PER_DAY
    residual -= np.average(residual, weights=rv[:, 2] ** -2)
    chi2 += np.sum((residual / rv[:, 2]) ** 2)
    return -0.5 * chi2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("swarmfit", nargs="?", default=os.path.join(ROOT, "build", "apps", "swarmfit"),
                        help="the swarmfit binary, or a command line that runs it")
    parser.add_argument("--systems", type=int, default=100000)
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--data", default=DATA, help="folder with the Kepler-9 files of ../shared/data")
    parser.add_argument("--config", default=os.path.join(ROOT, "examples", "kepler9.cfg"))
    args = parser.parse_args()
    rv, transits = load_data(args.data)
    params = [k9.G, k9.STAR]
    for row in k9.initial_astrocentric():
        params += list(row)
    ttvfast_likelihood(params, rv, transits)
    n = 0
    t0 = time.perf_counter()
    while n < 200 or time.perf_counter() - t0 < 2.0:
        ttvfast_likelihood(params, rv, transits)
        n += 1
    per_call = (time.perf_counter() - t0) / n
    print(f"TTVFast {ttvfast.__version__}: one likelihood (call + chi^2), step {k9.STEP:.6f} d, "
          f"span {k9.T_END - k9.T_REF:.0f} d: {per_call * 1e3:.4f} ms ({n} calls) = {1 / per_call:.1f} per second per core")
    out = subprocess.run(shlex.split(args.swarmfit) + ["bench", "--only", "B7", "--backend", args.backend, "--threads", "0",
                                                       "--b7-systems", str(args.systems), "--b7-config", args.config],
                         capture_output=True, text=True, check=True).stdout
    print(out, end="")
    for line in out.splitlines():
        if "one evaluation, 1 CPU thread" in line:
            ms = float(line.split(":")[1].split("ms")[0])
            print(f"ratio: swarmfit single evaluation / TTVFast call = {ms / (per_call * 1e3):.3f} "
                  f"(TTVFast per-core speed-up of swarmfit: {per_call * 1e3 / ms:.2f}x)")
        if "evaluations/s end to end" in line:
            rate = float(re.search(r"([0-9.e+-]+) evaluations/s end to end", line).group(1))
            backend = line.split(" on ")[1].split(" ")[0].rstrip(":")
            print(f"ratio: swarmfit batch on {backend} / one TTVFast core = {rate * per_call:.1f}x")


if __name__ == "__main__":
    main()
