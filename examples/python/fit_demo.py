#!/usr/bin/env python3
"""The demo fit from Python: two planets near the 2:1 resonance fitted to the synthetic RVs and
transit times of examples/demo (made by `swarmfit simulate` from examples/demo/truth.cfg).

    python3 examples/python/fit_demo.py [--quick] [--output DIR]

Fits with swarmfit.fit (the demo's differential-evolution optimisation, then DEMCMC until R-hat <
1.01 and ESS >= 400; --quick: 3000 generations, as the tests run it), prints the posterior table,
draws the RVs and the transit-time O-C with posterior model curves and the masses' marginals
(PNG files in DIR), and checks its own result against the truth: exit status 0 when it holds.
"""
import argparse
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import swarmfit  # noqa: E402

DEMO = pathlib.Path(__file__).resolve().parents[1] / "demo"
DRAWS = 40  # posterior draws whose model curves are drawn
QUICK_GENERATIONS = 3000
# The truth must lie within this many posterior standard deviations of the posterior mean (a
# well-calibrated posterior puts it within 3 sd for 99.7% of parameters; 4 leaves room for a
# short run), and the best draw must fit the data to about their errors.
TRUTH_SIGMAS = 4.0
MAX_REDUCED_CHI2 = 2.0


def ephemeris(epoch, time):
    """The straight line t0 + P epoch through the observed transit times (least squares)."""
    period, t0 = np.polyfit(epoch, time, 1)
    return t0, period


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short fit (the tests' setting)")
    parser.add_argument("--output", default=pathlib.Path(__file__).resolve().parent / "demo_fit_python",
                        help="folder for the run file and the plots (default: demo_fit_python next to this script)")
    args = parser.parse_args()
    out = pathlib.Path(args.output)
    out.mkdir(parents=True, exist_ok=True)

    model = swarmfit.Model.from_config(DEMO / "fit.cfg")
    print(model)
    keys = {"generations": QUICK_GENERATIONS, "ess_target": 0} if args.quick else {}
    run = swarmfit.fit(model, output=out / "demo_fit.h5", overwrite=True, **keys)
    summary = run.summary()
    print(summary[["unit", "median", "lower_16", "upper_84", "rhat", "ess_bulk"]].to_string())

    posterior = run.posterior
    rng = np.random.default_rng(1)
    draws = posterior.iloc[rng.choice(len(posterior), DRAWS, replace=False)][model.free_names].to_numpy()
    best = np.unravel_index(np.argmax(run.log_posterior[run.first_draw:]), run.log_posterior[run.first_draw:].shape)
    theta_best = run.chain[run.first_draw + best[0], best[1]]

    # RVs: data less the fitted offset, model curves of the draws.
    rv = model.rv_data
    offset_index = model.free_names.index("offset_SIM")
    grid = np.linspace(max(rv["time"].min() - 5, model.reference_epoch + 0.01), rv["time"].max() + 5, 3000)
    curves = model.rv(draws, grid)
    fig, ax = plt.subplots(figsize=(10, 4))
    ax.plot(grid - 2460000, curves.T, color="C1", alpha=0.15, lw=0.7)
    ax.errorbar(rv["time"] - 2460000, rv["rv"] - theta_best[offset_index], rv["error"], fmt="o", color="k", ms=3)
    ax.set(xlabel="BJD_TDB - 2460000", ylabel="RV (m/s)", title="RVs and posterior draws")
    fig.tight_layout()
    fig.savefig(out / "rv.png", dpi=120)

    # Transit-time O-C per planet against the data's linear ephemeris.
    transits = model.transit_times(draws)
    best_transits = model.transit_times(theta_best)
    fig, axes = plt.subplots(len(model.planets), 1, figsize=(10, 3 * len(model.planets)), sharex=True)
    for ax, planet in zip(np.atleast_1d(axes), model.planets):
        rows = transits.planet == planet
        t0, period = ephemeris(transits.epoch[rows], transits.observed[rows])
        linear = t0 + period * transits.epoch[rows]
        minutes = 24 * 60
        ax.plot(transits.observed[rows] - 2460000, (transits.model[:, rows] - linear).T * minutes, color="C1",
                alpha=0.15, lw=0.7)
        ax.errorbar(transits.observed[rows] - 2460000, (transits.observed[rows] - linear) * minutes,
                    transits.error[rows] * minutes, fmt="o", color="k", ms=3)
        ax.set(ylabel=f"O-C {planet} (min)")
    np.atleast_1d(axes)[-1].set_xlabel("BJD_TDB - 2460000")
    fig.tight_layout()
    fig.savefig(out / "transit_timing.png", dpi=120)

    # The masses' marginals with the truth.
    truth = pd.read_csv(DEMO / "data" / "truth.csv").iloc[0]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for ax, name in zip(axes, ("mass_b", "mass_c")):
        ax.hist(posterior[name], bins=40, color="C0")
        ax.axvline(truth[name], color="k", ls="--", label="truth")
        ax.set(xlabel=f"{name} ({model.units[name]})")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(out / "masses.png", dpi=120)
    print(f"plots: {out / 'rv.png'}, {out / 'transit_timing.png'}, {out / 'masses.png'}")

    # Checks: the truth within TRUTH_SIGMAS of the posterior, and the best draw fits the data.
    failures = []
    for name in model.free_names:
        mean, sd = summary.loc[name, "mean"], summary.loc[name, "sd"]
        if not abs(truth[name] - mean) <= TRUTH_SIGMAS * sd:
            failures.append(f"{name}: truth {truth[name]:.6g}, posterior {mean:.6g} +- {sd:.3g}")
    outside = len(failures)
    residual_rv = (model.rv(theta_best, rv["time"]) + theta_best[offset_index] - rv["rv"]) / rv["error"]
    residual_transits = (best_transits.model - best_transits.observed) / best_transits.error
    chi2 = np.mean(np.concatenate([residual_rv, residual_transits]) ** 2)
    if not chi2 < MAX_REDUCED_CHI2:
        failures.append(f"best draw: mean squared normalised residual {chi2:.3g}")
    for line in failures:
        print("FAILED:", line)
    print(f"fit_demo: {len(model.free_names) - outside} of "
          f"{len(model.free_names)} parameters within {TRUTH_SIGMAS:g} sd of the truth; best-draw residuals "
          f"{chi2:.2f}: {'OK' if not failures else 'FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
