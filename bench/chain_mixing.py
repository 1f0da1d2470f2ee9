#!/usr/bin/env python3
"""How a run's walkers move: per block of generations the walkers' ln posterior (median, 5%) and
acceptance, and per parameter the population's spread against the start's and a split R-hat over
the walkers (Gelman et al. 2013, BDA3 eq. 11.4, each walker's second half split in two), worst
first. Reads a swarmfit run file (chain/parameters [generation, walker, parameter]).

    python3 bench/chain_mixing.py RUN.h5 [--blocks 10] [--top 12]
"""
import argparse

import h5py
import numpy as np


def split_rhat(x):
    """x: [generation, walker]; split R-hat over the walkers' two halves."""
    n = x.shape[0] // 2
    if n < 2:
        return float("nan")
    chains = np.concatenate([x[:n], x[n:2 * n]], axis=1)  # [n, 2 walkers]
    means = chains.mean(axis=0)
    within = chains.var(axis=0, ddof=1).mean()
    between = n * means.var(ddof=1)
    return float(np.sqrt(((n - 1) / n * within + between / n) / within))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--blocks", type=int, default=10)
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    with h5py.File(a.run, "r") as f:
        p = f["chain/parameters"]
        g = p.shape[0]
        lp = f["chain/log_posterior"][...]
        acc = f["chain/accepted"][...] if "accepted" in f["chain"] else None
        names = [n.decode() for n in f["parameters/names"][...]]
        free = f["parameters/free"][...]
        print(f"{g} generations x {p.shape[1]} walkers")
        edges = np.linspace(0, g, a.blocks + 1).astype(int)
        for lo, hi in zip(edges[:-1], edges[1:]):
            if hi <= lo:
                continue
            block = lp[lo:hi]
            line = f"  generations {lo:6d}-{hi:6d}: ln posterior median {np.median(block):10.2f}, 5% {np.percentile(block, 5):10.2f}, best {block.max():10.2f}"
            if acc is not None and acc.ndim == 2:
                line += f", acceptance {acc[lo:hi].mean():.3f}"
            print(line)
        first = p[0]
        second = p[g // 2:]
        rows = []
        for k, i in enumerate(free):
            x = second[:, :, k]
            rows.append((split_rhat(x), names[i], first[:, k].std(), p[g - 1][:, k].std(), x.mean()))
        rows.sort(key=lambda r: -r[0])
        print(f"  parameters, worst split R-hat over the second half first (spread: walkers' sd at the start -> at the end)")
        for rh, name, s0, s1, m in rows[: a.top]:
            print(f"    {name:12s} R-hat {rh:7.3f}  spread {s0:.3g} -> {s1:.3g} ({s1 / s0:.2f}x)  mean {m:.8g}")


if __name__ == "__main__":
    main()
