#!/usr/bin/env python3
"""The PNG of `swarmfit stability --png`: MEGNO (top) and the orbits survived (bottom) of every
parameter set against each planet's eccentricity and the period ratios of neighbouring planets,
the quantities stability depends on most; unstable sets in red.

    python3 swarmfit_stability_plot.py RESULTS.h5 OUT.png
"""
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def main(path, png):
    with h5py.File(path, "r") as f:
        names = [text(n) for n in f["parameter_names"][:]]
        planets = [text(n) for n in f["planet_names"][:]]
        params = f["params"][:]
        megno = f["megno"][:]
        orbits = f["orbits"][:]
        survived = f["survived"][:].astype(bool)
        max_e = f["max_e"][:]
        horizon = f.attrs["horizon_orbits"]
        del max_e
    columns = []
    for k, p in enumerate(planets):
        c, s = names.index("secosw_" + p) if "secosw_" + p in names else None, None
        if c is not None:
            e = params[:, c] ** 2 + params[:, names.index("sesinw_" + p)] ** 2
        else:
            e = np.hypot(params[:, names.index("ecosw_" + p)], params[:, names.index("esinw_" + p)])
        columns.append(("e_" + p, e))
    for k in range(len(planets) - 1):
        a, b = params[:, names.index("period_" + planets[k])], params[:, names.index("period_" + planets[k + 1])]
        columns.append(("P_%s / P_%s" % (planets[k + 1], planets[k]), b / a))
    fig, axes = plt.subplots(2, len(columns), figsize=(3.6 * len(columns), 6.5), squeeze=False,
                             constrained_layout=True)
    for j, (label, x) in enumerate(columns):
        top, bottom = axes[0][j], axes[1][j]
        top.scatter(x[survived], megno[survived], s=3, c="tab:blue", label="survived")
        top.scatter(x[~survived], np.clip(megno[~survived], 0, None), s=3, c="tab:red", label="unstable")
        top.set_yscale("log")
        top.axhline(2, color="0.5", lw=0.8)
        top.set_ylabel("MEGNO <Y>")
        bottom.scatter(x, np.clip(orbits, 1e-3, None), s=3, c=np.where(survived, "tab:blue", "tab:red"))
        bottom.set_yscale("log")
        bottom.axhline(horizon, color="0.5", lw=0.8)
        bottom.set_ylabel("orbits survived")
        bottom.set_xlabel(label)
    axes[0][0].legend(markerscale=3, fontsize=8)
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main(*sys.argv[1:3])
