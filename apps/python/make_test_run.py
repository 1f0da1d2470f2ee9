#!/usr/bin/env python3
"""A synthetic `swarmfit fit` run file, to exercise apps/python/swarmfit_plot.py without the C++ side.

Usage:
    python3 apps/python/make_test_run.py OUT.h5 [--seed N] [--burn-in-draws N] [--no-rv] [--no-transits]

Writes the run-file layout of README, "Fit output": two planets (b, c) near the 2:1 resonance, two
RV instruments (HARPS-N, HIRES), 200 draws x 16 walkers x 12 free parameters, 50 predictive draws
plus the maximum-posterior one. Nothing here is physics: the star's RV is two sinusoids, and each
planet's TTV one sinusoid at the super-period whose amplitude grows with the other planet's mass.
The chain is correlated Gaussian noise around a point near the truth, relaxing from a wide start
(so the trace shows a burn-in); its log-likelihood is that of the toy model, so the
maximum-posterior draw is meaningful. Two predictive draws get status 8 (missed transit) with a
NaN transit time. --burn-in-draws writes the root attribute burn_in_draws; --no-rv and
--no-transits leave out /data/rv or /data/transits (and the instruments' parameters).
"""
import argparse
import math

import h5py
import numpy as np

PLANETS = ("b", "c")
INSTRUMENTS = ("HARPS-N", "HIRES")
REFERENCE_EPOCH = 2454960.0
DRAWS, WALKERS, THIN, PREDICTIVE_DRAWS = 200, 16, 10, 50
BURN_IN_TIMESCALE = 15.0  # draws over which the walkers' initial scatter decays
INITIAL_SCATTER = 30.0  # posterior standard deviations
# name, unit, true value, prior (kind, low, high) or None for fixed, posterior standard deviation
PLANET_PARAMETERS = [
    ("star_mass", "Msun", 1.03, None, 0),
    ("period_b", "day", 19.24345, ("uniform", 19.0, 19.5), 1.5e-5),
    ("mass_b", "Earth mass", 45.8, ("uniform", 1, 300), 4.0),
    ("secosw_b", "", 0.2456, ("uniform", -0.7, 0.7), 0.03),
    ("sesinw_b", "", 0.1451, ("uniform", -0.7, 0.7), 0.04),
    ("tc_b", "BJD_TDB", 2454977.193, ("uniform", 2454976.5, 2454978.5), 4e-4),
    ("inc_b", "deg", 88.98, None, 0),
    ("node_b", "deg", 0.0, None, 0),
    ("period_c", "day", 38.96642, ("uniform", 38.5, 39.5), 3e-5),
    ("mass_c", "Earth mass", 31.6, ("uniform", 1, 300), 3.0),
    ("secosw_c", "", -0.1351, None, 0),
    ("sesinw_c", "", 0.2631, None, 0),
    ("tc_c", "BJD_TDB", 2454969.450, ("uniform", 2454968.0, 2454971.0), 5e-4),
    ("inc_c", "deg", 89.19, None, 0),
    ("node_c", "deg", 0.281, None, 0),
]
INSTRUMENT_PARAMETERS = [
    ("offset_HARPS-N", "m/s", 2337.5, ("uniform", 2000, 2700), 1.0),
    ("jitter_HARPS-N", "m/s", 3.0, ("log_uniform", 0.1, 100), 0.8),
    ("offset_HIRES", "m/s", -15.0, ("uniform", -100, 100), 1.5),
    ("jitter_HIRES", "m/s", 5.0, ("log_uniform", 0.1, 100), 1.2),
]
RV_POINTS = {"HARPS-N": (30, 2455500.0, 2456500.0, 2.0, 6.0), "HIRES": (25, 2455000.0, 2455800.0, 3.0, 8.0)}
TRANSIT_EPOCHS = {"b": (80, 40), "c": (40, 24)}  # (last epoch, number observed)
TRANSIT_ERRORS = (0.0005, 0.003)  # days


def semi_amplitude(mass_earth, period_days, star_mass):
    """m/s, edge-on circular orbit, planet much lighter than the star."""
    return 28.4329 * (mass_earth / 317.83) * (period_days / 365.25) ** (-1 / 3) * star_mass ** (-2 / 3)


def star_rv(params, index, times):
    """[set][time] m/s without offsets: one sinusoid per planet, falling through zero at each transit
    (the star then moves towards the observer)."""
    rv = np.zeros((params.shape[0], times.size))
    for p in PLANETS:
        period = params[:, index["period_" + p], None]
        k = semi_amplitude(params[:, index["mass_" + p], None], period, params[:, index["star_mass"], None])
        rv -= k * np.sin(2 * np.pi * (times - params[:, index["tc_" + p], None]) / period)
    return rv


def transit_times(params, index, planet, epoch):
    """[set][row] BJD_TDB: linear ephemeris plus a sinusoid at the super-period of the pair."""
    period_b, period_c = params[:, index["period_b"], None], params[:, index["period_c"], None]
    super_period = 1 / np.abs(2 / period_c - 1 / period_b)
    phase = np.arctan2(params[:, index["sesinw_b"], None], params[:, index["secosw_b"], None])
    amplitude = {"b": 0.012 * params[:, index["mass_c"], None] / 31.6,
                 "c": -0.03 * params[:, index["mass_b"], None] / 45.8}
    times = np.empty((params.shape[0], epoch.size))
    for q, p in enumerate(PLANETS):
        rows = planet == q
        linear = params[:, index["tc_" + p], None] + epoch[rows] * params[:, index["period_" + p], None]
        times[:, rows] = linear + amplitude[p] * np.sin(2 * np.pi * (linear - REFERENCE_EPOCH) / super_period + phase)
    return times


def make_data(truth, index, instruments, with_transits, rng):
    data = {}
    if instruments:
        time, rv, error, instrument = [], [], [], []
        for j, name in enumerate(instruments):
            count, start, stop, low, high = RV_POINTS[name]
            t = np.sort(rng.uniform(start, stop, count))
            e = rng.uniform(low, high, count)
            scatter = np.hypot(e, truth[index["jitter_" + name]])
            time.append(t)
            rv.append(star_rv(truth[None], index, t)[0] + truth[index["offset_" + name]]
                      + scatter * rng.normal(size=count))
            error.append(e)
            instrument.append(np.full(count, j, dtype=np.int32))
        order = np.argsort(np.concatenate(time))
        data["rv"] = {key: np.concatenate(values)[order]
                      for key, values in (("time", time), ("rv", rv), ("error", error), ("instrument", instrument))}
    if with_transits:
        epoch = np.concatenate([np.sort(rng.choice(last + 1, count, replace=False)).astype(float)
                                for last, count in TRANSIT_EPOCHS.values()])
        planet = np.concatenate([np.full(count, q, dtype=np.int32)
                                 for q, (_, count) in enumerate(TRANSIT_EPOCHS.values())])
        error = rng.uniform(*TRANSIT_ERRORS, epoch.size)
        time = transit_times(truth[None], index, planet, epoch)[0] + error * rng.normal(size=epoch.size)
        ephemeris = [np.polyfit(epoch[planet == q], time[planet == q], 1) for q in range(len(PLANETS))]
        data["transits"] = {"time": time, "error": error, "epoch": epoch, "planet": planet,
                            "ephemeris_t0": np.array([e[1] for e in ephemeris]),
                            "ephemeris_period": np.array([e[0] for e in ephemeris])}
    return data


def rv_model(params, index, instruments, rv):
    offsets = np.stack([params[:, index["offset_" + name]] for name in instruments], axis=1)
    return star_rv(params, index, rv["time"]) + offsets[:, rv["instrument"]]


def log_likelihood(params, index, instruments, data):
    total = np.zeros(params.shape[0])
    if "rv" in data:
        rv = data["rv"]
        jitter = np.stack([params[:, index["jitter_" + name]] for name in instruments], axis=1)[:, rv["instrument"]]
        variance = rv["error"] ** 2 + jitter ** 2
        residual = rv["rv"] - rv_model(params, index, instruments, rv)
        total -= 0.5 * np.sum(residual ** 2 / variance + np.log(2 * np.pi * variance), axis=1)
    if "transits" in data:
        tr = data["transits"]
        residual = tr["time"] - transit_times(params, index, tr["planet"], tr["epoch"])
        total -= 0.5 * np.sum((residual / tr["error"]) ** 2 + np.log(2 * np.pi * tr["error"] ** 2), axis=1)
    return total


def log_prior(values, priors):
    total = np.zeros(values.shape[:-1])
    for k, (kind, low, high) in enumerate(priors):
        if kind == "uniform":
            total -= math.log(high - low)
        else:
            total -= np.log(values[..., k]) + math.log(math.log(high / low))
    return total


def make_chain(center, sd, priors, rng):
    """[draw][walker][free]: AR(1) correlated Gaussian noise plus a decaying initial scatter."""
    d = center.size
    factor = 0.6 * rng.normal(size=(d, 3))
    covariance = factor @ factor.T + np.eye(d)
    correlation = covariance / np.sqrt(np.outer(np.diag(covariance), np.diag(covariance)))
    cholesky = np.linalg.cholesky(correlation) * sd[:, None]
    rho = 0.8
    noise = np.empty((DRAWS, WALKERS, d))
    noise[0] = rng.normal(size=(WALKERS, d))
    for t in range(1, DRAWS):
        noise[t] = rho * noise[t - 1] + math.sqrt(1 - rho ** 2) * rng.normal(size=(WALKERS, d))
    start = INITIAL_SCATTER * sd * rng.normal(size=(WALKERS, d))
    decay = np.exp(-np.arange(DRAWS) / BURN_IN_TIMESCALE)[:, None, None]
    chain = center + noise @ cholesky.T + decay * start
    low = np.array([p[1] for p in priors])
    high = np.array([p[2] for p in priors])
    return np.clip(chain, low, high)


def string_data(group, name, values):
    group.create_dataset(name, data=list(values), dtype=h5py.string_dtype())


def config_text(table, seed):
    lines = ["# synthetic run: apps/python/make_test_run.py --seed %d" % seed]
    lines += ["%s = %.10g" % (name, value) for name, _, value, _, _ in table]
    lines += ["", "[priors]"]
    lines += ["%s = %s" % (name, prior_text(prior)) for name, _, _, prior, _ in table]
    return "\n".join(lines) + "\n"


def prior_text(prior):
    return "fixed" if prior is None else "%s(%.10g, %.10g)" % prior


def write_run(args):
    rng = np.random.default_rng(args.seed)
    instruments = () if args.no_rv else INSTRUMENTS
    table = PLANET_PARAMETERS + ([] if args.no_rv else INSTRUMENT_PARAMETERS)
    names = [row[0] for row in table]
    index = {name: k for k, name in enumerate(names)}
    truth = np.array([row[2] for row in table])
    free = np.array([k for k, row in enumerate(table) if row[3] is not None], dtype=np.int32)
    priors = [table[k][3] for k in free]
    sd = np.array([table[k][4] for k in free])
    data = make_data(truth, index, instruments, not args.no_transits, rng)

    chain = make_chain(truth[free] + 0.3 * sd * rng.normal(size=free.size), sd, priors, rng)
    full = np.tile(truth, (DRAWS * WALKERS, 1))
    full[:, free] = chain.reshape(-1, free.size)
    chain_log_prior = log_prior(chain, priors)
    chain_log_likelihood = log_likelihood(full, index, instruments, data).reshape(DRAWS, WALKERS)

    burn_in = args.burn_in_draws if args.burn_in_draws is not None else DRAWS // 2
    kept = burn_in * WALKERS + rng.choice((DRAWS - burn_in) * WALKERS, PREDICTIVE_DRAWS, replace=False)
    posterior = (chain_log_prior + chain_log_likelihood).ravel()
    best_row = burn_in * WALKERS + np.argmax(posterior[burn_in * WALKERS:])
    picks = np.append(kept, best_row)
    predictive = full[picks]
    predictive_status = np.zeros(picks.size, dtype=np.int32)
    predictive_log_posterior = posterior[picks]

    with h5py.File(args.output, "w") as f:
        f.attrs["config"] = config_text(table, args.seed)
        f.attrs["swarmfit_version"] = "synthetic (make_test_run.py)"
        f.attrs["thin"] = np.int64(THIN)
        f.attrs["seed"] = np.int64(args.seed)
        f.attrs["walkers"] = np.int64(WALKERS)
        f.attrs["temperatures"] = np.int64(1)
        if args.burn_in_draws is not None:
            f.attrs["burn_in_draws"] = np.int64(args.burn_in_draws)

        g = f.create_group("chain")
        g.create_dataset("parameters", data=chain)
        g["parameters"].attrs.create("names", [names[k] for k in free], dtype=h5py.string_dtype())
        g.create_dataset("log_prior", data=chain_log_prior)
        g.create_dataset("log_likelihood", data=chain_log_likelihood)
        g.create_dataset("log_posterior", data=chain_log_prior + chain_log_likelihood)
        g.create_dataset("status", data=np.zeros((DRAWS, WALKERS), dtype=np.int32))
        g.create_dataset("accepted", data=np.cumsum(rng.binomial(THIN, 0.25, (DRAWS, WALKERS)), axis=0))
        g.create_dataset("generation", data=THIN * np.arange(1, DRAWS + 1, dtype=np.int64))

        g = f.create_group("parameters")
        string_data(g, "names", names)
        string_data(g, "units", [row[1] for row in table])
        string_data(g, "priors", [prior_text(row[3]) for row in table])
        g.create_dataset("values", data=truth)
        g.create_dataset("free", data=free)

        g = f.create_group("predictive")
        if "transits" in data:
            tr = data["transits"]
            model_times = transit_times(predictive, index, tr["planet"], tr["epoch"])
            for draw in rng.choice(PREDICTIVE_DRAWS, 2, replace=False):
                predictive_status[draw] = 8
                predictive_log_posterior[draw] = -np.inf
                model_times[draw, rng.integers(tr["time"].size)] = np.nan
            g.create_dataset("transit_model", data=model_times)
            t = f.create_group("data/transits")
            for key in ("time", "error", "epoch", "planet"):
                t.create_dataset(key, data=tr[key])
            t.attrs.create("planets", PLANETS, dtype=h5py.string_dtype())
            t.attrs["ephemeris_t0"] = tr["ephemeris_t0"]
            t.attrs["ephemeris_period"] = tr["ephemeris_period"]
        if "rv" in data:
            rv = data["rv"]
            shortest_period = min(truth[index["period_" + p]] for p in PLANETS)
            grid = np.arange(rv["time"].min() - 20, rv["time"].max() + 20, shortest_period / 50)
            g.create_dataset("rv_grid", data=grid)
            g.create_dataset("rv_curve", data=star_rv(predictive, index, grid))
            g.create_dataset("rv_model", data=rv_model(predictive, index, instruments, rv))
            r = f.create_group("data/rv")
            for key in ("time", "rv", "error", "instrument"):
                r.create_dataset(key, data=rv[key])
            r.attrs.create("instruments", instruments, dtype=h5py.string_dtype())
        g.create_dataset("parameters", data=predictive)
        g.create_dataset("status", data=predictive_status)
        g.create_dataset("log_posterior", data=predictive_log_posterior)
        g.attrs["best"] = np.int64(picks.size - 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", help="HDF5 file to write")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--burn-in-draws", type=int, help="write the root attribute burn_in_draws")
    parser.add_argument("--no-rv", action="store_true", help="no RV data and no instruments")
    parser.add_argument("--no-transits", action="store_true", help="no transit data")
    write_run(parser.parse_args())


if __name__ == "__main__":
    main()
