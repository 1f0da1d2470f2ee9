#!/usr/bin/env python3
"""The PNG of `swarmfit map`: MEGNO (left; 2 = quasi-periodic, capped at 8) and the orbits survived
(right; log scale, the horizon where the cell survived) over the grid of the CSV the command wrote.

    python3 swarmfit_map.py MAP.csv MAP.png HORIZON_ORBITS
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def main(csv, png, horizon):
    table = pd.read_csv(csv)
    xname, yname = table.columns[0], table.columns[1]
    xs, ys = np.unique(table[xname]), np.unique(table[yname])
    shape = (len(ys), len(xs))
    megno = np.where(table["survived"] == 1, table["megno"], np.nan).reshape(shape)
    orbits = np.clip(table["orbits"].to_numpy(), 1e-3, None).reshape(shape)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), constrained_layout=True)
    m = axes[0].pcolormesh(xs, ys, np.clip(megno, 2, 8), shading="nearest", cmap="RdYlBu_r", vmin=2, vmax=8)
    fig.colorbar(m, ax=axes[0], label="MEGNO <Y> (white: unstable)")
    t = axes[1].pcolormesh(xs, ys, np.log10(orbits), shading="nearest", cmap="viridis", vmin=0,
                           vmax=np.log10(float(horizon)))
    fig.colorbar(t, ax=axes[1], label="log10 orbits survived (of the outermost planet)")
    for ax in axes:
        ax.set_xlabel(xname)
        ax.set_ylabel(yname)
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main(*sys.argv[1:4])
