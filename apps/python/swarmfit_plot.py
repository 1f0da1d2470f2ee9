#!/usr/bin/env python3
"""Plots of a `swarmfit fit` run file; the program behind `swarmfit plot`.

Usage:
    python3 apps/python/swarmfit_plot.py RUN.h5 [--output DIR] [--burn-in N] [--corner REGEX]

Reads the HDF5 run file (layout: README, "Fit output") and writes into DIR (default: RUN without
.h5, plus "_plots"):
    rv.png            RV data minus each instrument's offset, with the posterior draws' curves, the
                      maximum-posterior curve and its residuals (if the run has RV data)
    ttv_<planet>.png  observed and model O-C of the transit times against the data's linear
                      ephemeris, and the residuals (one per planet with transit data)
    corner.png        1-d and 2-d marginals of the free parameters after the burn-in (with --corner,
                      those whose names match the regular expression: 'mass_' for the masses)
    trace.png         every walker's free parameters and log posterior against the generation
The model curves come from the run's predictive draws (/predictive); draws whose status is not 0
are left out, and a run file without predictive draws (a checkpoint of an unfinished run) gets
only corner.png and trace.png. --burn-in N counts draws (stored rows of /chain, after thinning);
the default is the root attribute burn_in_draws, else half the draws. Prints the path of every
file written.

Needs numpy, h5py and matplotlib (Debian: python3-numpy python3-h5py python3-matplotlib).
"""
import argparse
import math
import os
import re
import shutil
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the non-interactive backend)
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

MINUTES_PER_DAY = 1440.0
MAX_CORNER_POINTS = 20000
CORNER_PANEL_INCHES = 1.8
TRACE_PANEL_INCHES = 1.3
TRACE_POINTS = 2000  # per walker line: more than the figure's width in pixels shows nothing more
# Probability inside the 1- and 2-sigma contours of a 2-d Gaussian: 1 - exp(-k^2 / 2).
CONTOUR_MASSES = (1 - math.exp(-0.5), 1 - math.exp(-2.0))
DPI = 100


def strings(value):
    """A list of str from an h5py string value: str, bytes, or an array of either."""
    return [v.decode() if isinstance(v, bytes) else str(v) for v in np.atleast_1d(value)]


def read_strings(dataset):
    return strings(dataset.asstr()[()])


def line_alpha(count, total=6.0, lowest=0.03, highest=0.5):
    """Opacity of one of `count` overlaid lines, so that the bundle reads as a band."""
    return min(highest, max(lowest, total / max(count, 1)))


def display_offset(values):
    """A round number to subtract from values whose spread is tiny next to their size (times in BJD,
    periods known to 1e-5): what is left fits in short tick labels. 0 when no offset is needed."""
    low, median, high = np.percentile(values, [16, 50, 84])
    spread = high - low
    if not spread > 0:
        return 0.0
    decimals = -(math.floor(math.log10(spread)) + 1)  # the offset is rounded to 10^-decimals
    if abs(median) < 1e4 * 10.0 ** -decimals:
        return 0.0
    return round(median, decimals)


def axis_label(name, unit, offset=0.0):
    label = name
    if offset:
        label += " - " + np.format_float_positional(offset, trim="-")
    return label + (" [%s]" % unit if unit else "")


def format_interval(median, up, down):
    """'median^{+up}_{-down}' (matplotlib mathtext) with two significant digits in the smaller bound."""
    smallest = min(up, down)
    decimals = max(0, 1 - math.floor(math.log10(smallest))) if smallest > 0 else 3
    median = round(median, decimals) + 0.0  # no "-0.00"
    return "%.*f$^{+%.*f}_{-%.*f}$" % (decimals, median, decimals, up, decimals, down)


def save(fig, path):
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def burn_in_draws(run, requested):
    draws = run["chain/generation"].shape[0]
    if draws == 0:
        raise ValueError("the chain has no draws")
    burn_in = requested if requested is not None else int(run.attrs.get("burn_in_draws", draws // 2))
    if not 0 <= burn_in < draws:
        raise ValueError("burn-in of %d draws: the chain has %d draws" % (burn_in, draws))
    return burn_in


def free_parameter_labels(run):
    """(name, unit) of each free parameter, in the order of /chain/parameters."""
    units = read_strings(run["parameters/units"])
    names = read_strings(run["parameters/names"])
    return [(names[k], units[k]) for k in run["parameters/free"][()]]


def predictive_draws(run):
    """Indices of the predictive draws with status 0, and the index of the maximum-posterior draw."""
    predictive = run["predictive"]
    good = np.flatnonzero(predictive["status"][()] == 0)
    return good, int(predictive.attrs["best"])


def plot_rv(run, path):
    data, predictive = run["data/rv"], run["predictive"]
    time, rv, error = data["time"][()], data["rv"][()], data["error"][()]
    instrument = data["instrument"][()]
    good, best = predictive_draws(run)
    grid, curves = predictive["rv_grid"][()], predictive["rv_curve"][()]
    model = predictive["rv_model"][()]
    names = read_strings(run["parameters/names"])
    parameters = predictive["parameters"][()]

    # The offset each draw applied (fitted, or the marginalised optimum): its model at the data
    # times minus its offset-free curve there.
    applied = model[good] - np.array([np.interp(time, grid, curves[d]) for d in good])
    t_ref = 1000.0 * math.floor(min(time.min(), grid.min()) / 1000.0)

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(12, 7.5),
                                      gridspec_kw={"height_ratios": [3, 1], "hspace": 0.05})
    top.plot(grid - t_ref, curves[good].T, color="C0", lw=0.6, alpha=line_alpha(good.size))
    top.plot([], [], color="C0", lw=0.6, label="posterior draws (%d)" % good.size)
    top.plot(grid - t_ref, curves[best], color="k", lw=1.4, label="maximum posterior")
    markers = "osD^vP*X"
    for j, label in enumerate(strings(data.attrs["instruments"])):
        points = np.flatnonzero(instrument == j)
        if points.size == 0:
            continue
        offset = np.median(np.median(applied[:, points], axis=1))
        jitter_name = "jitter_" + label
        jitter = np.median(parameters[good, names.index(jitter_name)]) if jitter_name in names else 0.0
        inflated = np.hypot(error[points], jitter)
        residual = rv[points] - model[best, points]
        style = dict(color="C%d" % (j + 1), marker=markers[j % len(markers)], ms=4, ls="none")
        for ax, values in ((top, rv[points] - offset), (bottom, residual)):
            ax.errorbar(time[points] - t_ref, values, inflated, fmt="none", ecolor=style["color"], alpha=0.3,
                        elinewidth=2.5)
            ax.errorbar(time[points] - t_ref, values, error[points], elinewidth=1, **style)
        top.plot([], [], label="%s: offset %.2f m/s, jitter %.2f m/s, rms %.2f m/s"
                 % (label, offset, jitter, np.sqrt(np.mean(residual ** 2))), **style)
    bottom.axhline(0, color="k", lw=1)
    top.set_ylabel("RV - instrument offset [m/s]")
    top.set_title("Radial velocity: data (light bars include the median jitter), posterior draws, maximum posterior")
    top.legend(fontsize=8, loc="best")
    bottom.set_ylabel("data - max. post.\n[m/s]")
    bottom.set_xlabel("time [BJD_TDB - %d]" % t_ref)
    top.set_xlim((grid - t_ref).min(), (grid - t_ref).max())
    save(fig, path)


def plot_ttvs(run, output):
    data, predictive = run["data/transits"], run["predictive"]
    time, error, epoch = data["time"][()], data["error"][()], data["epoch"][()]
    planet = data["planet"][()]
    t0, period = data.attrs["ephemeris_t0"], data.attrs["ephemeris_period"]
    model = predictive["transit_model"][()]
    good, best = predictive_draws(run)
    for p, name in enumerate(strings(data.attrs["planets"])):
        rows = np.flatnonzero(planet == p)
        if rows.size == 0:
            continue
        rows = rows[np.argsort(epoch[rows])]
        ephemeris = t0[p] + epoch[rows] * period[p]
        observed = (time[rows] - ephemeris) * MINUTES_PER_DAY
        draws = (model[np.ix_(good, rows)] - ephemeris) * MINUTES_PER_DAY
        best_model = (model[best, rows] - ephemeris) * MINUTES_PER_DAY
        errors = error[rows] * MINUTES_PER_DAY

        fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(10, 6.5),
                                          gridspec_kw={"height_ratios": [3, 1], "hspace": 0.05})
        top.plot(epoch[rows], draws.T, color="C0", lw=0.6, alpha=line_alpha(good.size))
        top.plot([], [], color="C0", lw=0.6, label="posterior draws (%d)" % good.size)
        top.plot(epoch[rows], best_model, color="k", lw=1.4, label="maximum posterior")
        top.errorbar(epoch[rows], observed, errors, fmt="o", color="C1", ms=4, label="observed")
        bottom.errorbar(epoch[rows], observed - best_model, errors, fmt="o", color="C1", ms=4)
        bottom.axhline(0, color="k", lw=1)
        top.set_title("Planet %s: O-C against T0 = %.6f BJD_TDB, P = %.7f d" % (name, t0[p], period[p]))
        top.set_ylabel("O - C [min]")
        top.legend(fontsize=8, loc="best")
        bottom.set_ylabel("observed - max. post.\n[min]")
        bottom.set_xlabel("epoch")
        save(fig, os.path.join(output, "ttv_%s.png" % re.sub(r"[^A-Za-z0-9_.-]", "_", name)))


def contour_levels(density, masses):
    """Density thresholds enclosing the given probability masses (largest mass first)."""
    ordered = np.sort(density.ravel())[::-1]
    cumulative = np.cumsum(ordered) / ordered.sum()
    return [ordered[min(np.searchsorted(cumulative, m), ordered.size - 1)] for m in sorted(masses, reverse=True)]


def smoothed_histogram(x, y, ranges):
    bins = int(np.clip(np.sqrt(x.size) / 2, 10, 40))
    counts, x_edges, y_edges = np.histogram2d(x, y, bins=bins, range=ranges)
    kernel = np.array([1.0, 2.0, 1.0]) / 4.0
    for axis in (0, 1):
        counts = np.apply_along_axis(np.convolve, axis, counts, kernel, mode="same")
    return 0.5 * (x_edges[1:] + x_edges[:-1]), 0.5 * (y_edges[1:] + y_edges[:-1]), counts


def value_range(values):
    low, high = values.min(), values.max()
    if high > low:
        return low, high
    return low - 0.5, high + 0.5


def plot_corner(run, burn_in, path, select=None):
    chain = run["chain"]
    samples = chain["parameters"][burn_in:]
    samples = samples[np.isfinite(chain["log_posterior"][burn_in:])]
    if samples.shape[0] > MAX_CORNER_POINTS:
        samples = samples[np.random.default_rng(0).choice(samples.shape[0], MAX_CORNER_POINTS, replace=False)]
    labels = free_parameter_labels(run)
    if select is not None:
        keep = [k for k, (name, _) in enumerate(labels) if re.search(select, name)]
        if not keep:
            raise ValueError("--corner: no free parameter's name matches '%s'" % select)
        samples = samples[:, keep]
        labels = [labels[k] for k in keep]
    dimension = samples.shape[1]
    offsets = [display_offset(samples[:, k]) for k in range(dimension)]
    shifted = samples - np.array(offsets)
    ranges = [value_range(shifted[:, k]) for k in range(dimension)]

    size = CORNER_PANEL_INCHES * dimension + 1.6
    fig, axes = plt.subplots(dimension, dimension, figsize=(size, size), squeeze=False)
    fig.subplots_adjust(left=1.3 / size, bottom=1.3 / size, right=1 - 0.2 / size, top=1 - 0.6 / size,
                        wspace=0.06, hspace=0.06)
    point_alpha = min(0.5, 300.0 / samples.shape[0])
    for i in range(dimension):
        for j in range(dimension):
            ax = axes[i, j]
            if j > i:
                ax.set_visible(False)
                continue
            if i == j:
                low, median, high = np.percentile(samples[:, i], [16, 50, 84])
                ax.hist(shifted[:, i], bins=40, range=ranges[i], histtype="step", color="k")
                for q, style in ((low, "--"), (median, "-"), (high, "--")):
                    ax.axvline(q - offsets[i], color="C0", ls=style, lw=1)
                ax.set_title("%s = %s" % (labels[i][0], format_interval(median, high - median, median - low)),
                             fontsize=8)
                ax.set_yticks([])
            else:
                x, y = shifted[:, j], shifted[:, i]
                ax.plot(x, y, ".", ms=1.5, color="k", alpha=point_alpha, rasterized=True)
                centres_x, centres_y, density = smoothed_histogram(x, y, [ranges[j], ranges[i]])
                levels = contour_levels(density, CONTOUR_MASSES)
                if levels[0] < levels[1]:
                    ax.contour(centres_x, centres_y, density.T, levels=levels, colors="C0", linewidths=1)
                ax.set_ylim(ranges[i])
            ax.set_xlim(ranges[j])
            ax.xaxis.set_major_locator(MaxNLocator(3, prune="both"))
            if i != j:
                ax.yaxis.set_major_locator(MaxNLocator(3, prune="both"))
            ax.ticklabel_format(style="plain", useOffset=False)
            ax.tick_params(labelsize=7)
            if i == dimension - 1:
                ax.set_xlabel(axis_label(*labels[j], offsets[j]), fontsize=8)
                ax.tick_params(axis="x", labelrotation=45)
            else:
                ax.set_xticklabels([])
            if j == 0 and i > 0:
                ax.set_ylabel(axis_label(*labels[i], offsets[i]), fontsize=8)
                ax.tick_params(axis="y", labelrotation=45)
            elif i != j:
                ax.set_yticklabels([])
    fig.align_labels()
    fig.suptitle("Posterior after a burn-in of %d draws: %d points; lines at 16, 50, 84%%, contours at 1 and 2 sigma"
                 % (burn_in, samples.shape[0]), fontsize=10)
    save(fig, path)


def plot_trace(run, burn_in, path):
    chain = run["chain"]
    draws = chain["generation"].shape[0]
    stride = max(1, draws // TRACE_POINTS)
    values = chain["parameters"][::stride]
    log_posterior = chain["log_posterior"][::stride]
    generation = chain["generation"][::stride]
    burn_in_generation = chain["generation"][burn_in]
    kept_values = chain["parameters"][burn_in:]
    kept_log_posterior = chain["log_posterior"][burn_in:]
    kept_log_posterior = kept_log_posterior[np.isfinite(kept_log_posterior)]
    labels = free_parameter_labels(run)
    alpha = line_alpha(values.shape[1], total=8.0)
    panels = len(labels) + 1

    fig, axes = plt.subplots(panels, 1, sharex=True, figsize=(11, TRACE_PANEL_INCHES * panels + 1.0), squeeze=False)
    axes = axes[:, 0]
    fig.subplots_adjust(left=0.25, right=0.97, bottom=0.7 / (TRACE_PANEL_INCHES * panels + 1.0),
                        top=1 - 0.4 / (TRACE_PANEL_INCHES * panels + 1.0), hspace=0.08)
    for k, (ax, (name, unit)) in enumerate(zip(axes, labels)):
        offset = display_offset(kept_values[:, :, k].ravel())
        ax.plot(generation, values[:, :, k] - offset, color="k", lw=0.5, alpha=alpha)
        ax.set_ylabel(axis_label(name, unit, offset), rotation=0, ha="right", va="center", fontsize=8)
    finite = np.where(np.isfinite(log_posterior), log_posterior, np.nan)
    axes[-1].plot(generation, finite, color="k", lw=0.5, alpha=alpha)
    # The burn-in may start far below the posterior; keep the kept draws readable.
    if kept_log_posterior.size:
        low, high = kept_log_posterior.min(), kept_log_posterior.max()
        span = max(high - low, 1.0)
        axes[-1].set_ylim(low - 0.5 * span, high + 0.1 * span)
    axes[-1].set_ylabel("log posterior", rotation=0, ha="right", va="center", fontsize=8)
    axes[-1].set_xlabel("generation")
    for ax in axes:
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.tick_params(labelsize=7)
        ax.yaxis.set_major_locator(MaxNLocator(4))
        if burn_in > 0:
            ax.axvline(burn_in_generation, color="C3", ls="--", lw=1)
    burn_in_text = "dashed: end of the burn-in (%d draws)" % burn_in if burn_in > 0 else "no burn-in"
    axes[0].set_title("Walkers (%d) against the generation; %s" % (values.shape[1], burn_in_text), fontsize=10)
    save(fig, path)


def move_into_place(partial, output, overwrite):
    """Moves the finished plots of the folder `partial` into `output` and prints their paths;
    False (with one line on stderr) when one would replace a file and `overwrite` is not set."""
    names = sorted(os.listdir(partial))
    existing = [n for n in names if os.path.exists(os.path.join(output, n))]
    if existing and not overwrite:
        print("swarmfit: error: command line: --output %s has %s (add --overwrite to replace)" % (output, existing[0]),
              file=sys.stderr)
        return False
    os.makedirs(output, exist_ok=True)
    for name in names:
        os.replace(os.path.join(partial, name), os.path.join(output, name))
        print(os.path.join(output, name))
    return True


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments in one line and exit 2, as every swarmfit command."""

    def error(self, message):
        print("swarmfit: error: command line: %s (swarmfit plot --help)" % message, file=sys.stderr)
        sys.exit(2)


def parse_arguments(argv):
    parser = OneLineParser(prog="swarmfit plot", description="Plots of a swarmfit fit run file.", allow_abbrev=False)
    parser.add_argument("run", help="HDF5 run file written by swarmfit fit")
    parser.add_argument("--output", help="folder for the PNG files (default: RUN without .h5, plus _plots)")
    parser.add_argument("--burn-in", type=int, help="draws to leave out (default: burn_in_draws, else half)")
    parser.add_argument("--corner", help="regular expression: the corner plot's parameters (default: all free)")
    parser.add_argument("--overwrite", action="store_true", help="replace the PNG files of an earlier plot")
    return parser.parse_args(argv)


def main(argv):
    args = parse_arguments(argv)
    if args.corner is not None:
        try:
            re.compile(args.corner)
        except re.error as error:
            print("swarmfit: error: command line: --corner '%s' is not a regular expression (%s)" % (args.corner, error),
                  file=sys.stderr)
            return 2
    stem = args.run[:-3] if args.run.endswith(".h5") else args.run
    output = args.output or stem + "_plots"
    if os.path.exists(output) and not os.path.isdir(output):
        print("swarmfit: error: command line: --output %s exists and is not a folder" % output, file=sys.stderr)
        return 2
    # The plots are drawn into a partial folder and moved into place only when all are done: a
    # damaged run file or an interruption leaves no partial set of PNGs behind.
    partial = "%s.partial.%d" % (output.rstrip("/"), os.getpid())
    try:
        with h5py.File(args.run, "r") as run:
            if "data" not in run:
                raise KeyError("no /data group: not a complete swarmfit run file")
            burn_in = burn_in_draws(run, args.burn_in)
            os.makedirs(partial)
            if "predictive" in run and run["predictive/status"].shape[0] > 0:
                if "data/rv" in run:
                    plot_rv(run, os.path.join(partial, "rv.png"))
                if "data/transits" in run:
                    plot_ttvs(run, partial)
            else:
                print("swarmfit plot: %s has no predictive draws: no RV or O-C plots" % args.run, file=sys.stderr)
            plot_corner(run, burn_in, os.path.join(partial, "corner.png"), args.corner)
            plot_trace(run, burn_in, os.path.join(partial, "trace.png"))
        if not move_into_place(partial, output, args.overwrite):
            return 2
    except (OSError, KeyError, ValueError, TypeError, IndexError) as error:
        print("swarmfit: error: %s: %s" % (args.run, str(error).splitlines()[0] if str(error) else type(error).__name__),
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
