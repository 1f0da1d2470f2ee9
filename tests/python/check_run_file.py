#!/usr/bin/env python3
"""A `swarmfit fit` run file, read the way the README tells users to: with h5py, and into ArviZ
in a few lines. Checks the layout (shapes, names, attributes) and that ArviZ's rank-normalised
split R-hat and bulk/tail ESS (Vehtari et al. 2021) of the kept draws agree with the summary CSV
swarmfit wrote for the same draws.

    check_run_file.py RUN.h5 SUMMARY.csv
Exit status 0 when everything agrees, 77 without ArviZ; one line per failure otherwise.
"""
import csv
import sys

import h5py
import numpy as np

try:
    import arviz as az
except ImportError:  # scripts/setup.sh installs it; without it the test says so and skips
    print("SKIP: ArviZ is not installed (python3 -m pip install arviz)")
    sys.exit(77)


def main(run_path, summary_path):
    failures = []
    with h5py.File(run_path, "r") as f:
        chain = f["chain/parameters"][()]  # [draw][walker][free parameter]
        names = [str(n) for n in f["chain/parameters"].attrs["names"]]
        log_posterior = f["chain/log_posterior"][()]
        all_names = list(f["parameters/names"].asstr()[()])
        free = f["parameters/free"][()]
        first = int(f.attrs["burn_in_draws"])
        config = f.attrs["config"]
        if [all_names[k] for k in free] != names:
            failures.append("chain/parameters names differ from parameters/names[free]")
        if chain.shape[:2] != log_posterior.shape or chain.shape[2] != len(names):
            failures.append(f"shapes: parameters {chain.shape}, log_posterior {log_posterior.shape}")
        if "[priors]" not in config:
            failures.append("the config attribute does not hold the configuration text")
        for group in ("data", "predictive", "state"):
            if group not in f:
                failures.append(f"missing group /{group}")
    # ArviZ wants (chain, draw): each walker is a chain.
    kept = chain[first:]
    posterior = {name: kept[:, :, k].T for k, name in enumerate(names)}
    idata = az.from_dict(posterior=posterior)
    rhat = az.rhat(idata, method="rank")
    ess_bulk = az.ess(idata, method="bulk")

    def ess_tail(draws):
        # ArviZ's tail ESS (the split ESS of the 5% and 95% quantiles' indicators) with R's type-7
        # quantile as the posterior package takes it: at a value several draws share (a walker's
        # rejected moves) it is that value, where ArviZ's interpolation between two equal order
        # statistics can round one ulp below it and leave them all out of the indicator.
        ordered = np.sort(draws, axis=None)
        ess = []
        for p in (0.05, 0.95):
            h = (ordered.size - 1) * p
            lo = int(np.floor(h))
            q = ordered[lo]
            if lo + 1 < ordered.size and ordered[lo + 1] != q:
                q = (1 - (h - lo)) * q + (h - lo) * ordered[lo + 1]
            ess.append(float(az.ess((draws <= q).astype(float), method="mean")))
        return min(ess)
    with open(summary_path) as handle:
        rows = {row["parameter"]: row for row in csv.DictReader(handle)}
    for name in names:
        ours = rows[name]
        pairs = [("rhat", float(rhat[name]), float(ours["rhat"]), 1e-4),
                 ("ess_bulk", float(ess_bulk[name]), float(ours["ess_bulk"]), 1e-3),
                 ("ess_tail", ess_tail(posterior[name]), float(ours["ess_tail"]), 1e-3),
                 ("median", float(np.median(kept[:, :, names.index(name)])), float(ours["median"]), 1e-12)]
        for what, theirs, mine, tolerance in pairs:
            if not abs(theirs - mine) <= tolerance * max(1.0, abs(theirs)):
                failures.append(f"{name} {what}: ArviZ/numpy {theirs!r}, swarmfit {mine!r}")
    for line in failures:
        print(line)
    print(f"{run_path}: {len(names)} free parameters, {kept.shape[0]} kept draws x {kept.shape[1]} walkers; "
          f"{'OK' if not failures else str(len(failures)) + ' failures'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
