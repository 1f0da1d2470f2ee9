#!/usr/bin/env python3
"""E1 peer (design/BENCHMARKS.md): Kepler-9 RVs + transit times fitted the way a user does today,
TTVFast (Deck et al. 2014, PyPI ttvfast) as the forward model and emcee (Foreman-Mackey et al.
2013) as the sampler, on 2 CPU cores (multiprocessing Pool(2)).

Measures the wall time until every free parameter has rank-normalised split R-hat < 1.01 and bulk
ESS >= 1000 (Vehtari et al. 2021), each walker taken as a chain and the first half of the chain
discarded as burn-in, checked every --check-every steps; ESS per second = min bulk ESS / wall
seconds (the diagnostics' own time included). Also one likelihood's cost (200 serial calls at the
configuration's values).

The model is swarmfit's, read from the same configuration (examples/kepler9.cfg and the data file
it includes): parameters star_mass; period_p, mass_p (Earth masses), secosw_p, sesinw_p, tc_p,
inc_p, node_p per planet; offset_I, jitter_I per RV instrument. Jacobi elements (mu = G times the
interior mass plus the planet), G = k^2, osculating at reference_epoch, converted to an
astrocentric Cartesian state for TTVFast (tests/fixtures/make_kepler9_fixtures.py; TTVFast's own
Jacobi elements take another mu). Step: time_step, or the shortest period / 20; span: the last
datum + 0.6 times the longest period; a transit farther than star_radius from the star's centre on
the sky does not count; transits matched to the data's epochs through the data's linear ephemeris,
a missed observed transit -> ln L = -inf. Gaussian RV likelihood with jitter in quadrature and
Gaussian transit times. Priors from the [priors] section: fixed, fixed(v), uniform(a, b),
log_uniform(a, b), normal(mu, sigma), truncated_normal(mu, sigma, a, b). Walkers start at the
configuration's values (which must lie inside the priors) with Gaussian scatter of 0.01 prior
standard deviations, each redrawn while its posterior is zero (as swarmfit fit).

Run from the repository root (pip install ttvfast emcee rebound numpy scipy; arviz optional: if it
imports, its R-hat and bulk ESS of the final chain are compared with ours):
    python3 bench/e1_ttvfast_emcee.py [--config examples/kepler9.cfg] [--walkers 48] [--seed 1]
        [--check-every 200] [--max-seconds 1800] [--quick] [--output e1_ttvfast_emcee.json]

References: Foreman-Mackey, Hogg, Lang & Goodman 2013, PASP 125, 306 (emcee); Deck, Agol, Holman &
Nesvorny 2014, ApJ 787, 132 (TTVFast); Vehtari, Gelman, Simpson, Carpenter & Buerkner 2021,
Bayesian Analysis 16, 667 (rank-normalised split R-hat, bulk ESS).
"""
import argparse
import datetime
import json
import math
import multiprocessing
import os
import platform
import sys
import time
import warnings

import emcee
import numpy as np
import rebound
import scipy
import ttvfast
from scipy.special import ndtri
from scipy.stats import rankdata

# swarmfit's units (models/include/swarmfit/models/units.hpp): AU, day, solar mass.
K = 0.01720209895
G = K * K
EARTH_MASS = 3.986004e14 / 1.32712440018e20  # Msun
SOLAR_RADIUS = 695700.0 / 149597870.7  # AU
AU_PER_DAY = 149597870700.0 / 86400.0  # m/s

PLANET_KEYS = ("period", "mass", "secosw", "sesinw", "tc", "inc", "node")
PLANET_DEFAULTS = {"secosw": 0.0, "sesinw": 0.0, "inc": 90.0, "node": 0.0}
# Model keys whose non-default values this script does not implement (swarmfit's defaults).
MODEL_DEFAULTS = {"element_frame": "jacobi", "mass_parameter": "mass", "phase_parameter": "tc",
                  "marginalize_offsets": "false", "transit_likelihood": "gaussian"}
DATA_KEYS = {"file", "columns", "planet", "instrument", "instrument_names"}

# Convergence targets of E1.
RHAT_TARGET = 1.01
ESS_TARGET = 1000.0


# ---- configuration ------------------------------------------------------------------------------

def read_config(path):
    """swarmfit's sectioned key = value format: '#' comments, [type name] (or [type]) sections,
    include = FILE relative to the including file (an included file starts with global lines).
    Returns (globals, sections); a section is dict(type, name, dir, entries)."""
    globals_, sections = {}, []

    def read(file, depth):
        if depth > 8:
            raise ValueError(f"{file}: includes nested too deeply")
        current = None
        with open(file) as f:
            for number, line in enumerate(f, 1):
                text = line.split("#", 1)[0].strip()
                if not text:
                    continue
                where = f"{file}:{number}"
                if text.startswith("["):
                    words = text.strip("[]").split()
                    if not text.endswith("]") or not 1 <= len(words) <= 2:
                        raise ValueError(f"{where}: expected [type name], got {text!r}")
                    current = dict(type=words[0], name=words[1] if len(words) == 2 else "",
                                   dir=os.path.dirname(os.path.abspath(file)), entries={})
                    sections.append(current)
                    continue
                key, equals, value = (s.strip() for s in text.partition("="))
                if not equals or not key:
                    raise ValueError(f"{where}: expected 'key = value', got {text!r}")
                if key == "include":
                    read(os.path.join(os.path.dirname(file), value), depth + 1)
                    continue
                target = current["entries"] if current is not None else globals_
                if key in target:
                    raise ValueError(f"{where}: key {key!r} given twice")
                target[key] = value

    read(path, 0)
    return globals_, sections


def parse_prior(text, name):
    """'kind(a, b, ...)' -> (kind, (a, b, ...)); 'fixed' -> ("fixed", ()) (the configuration's value)."""
    text = text.strip()
    if text == "fixed":
        return "fixed", ()
    kind, _, rest = text.partition("(")
    kind = kind.strip()
    args = tuple(float(a) for a in rest.rstrip(")").split(","))
    arity = {"fixed": 1, "uniform": 2, "log_uniform": 2, "normal": 2, "truncated_normal": 4}
    if kind not in arity or not rest.endswith(")") or len(args) != arity[kind]:
        raise ValueError(f"[priors] {name}: cannot read {text!r} (fixed, fixed(v), uniform(a, b), log_uniform(a, b), "
                         "normal(mu, sigma), truncated_normal(mu, sigma, a, b))")
    return kind, args


def _phi(z):
    return math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


def _cdf(z):
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def log_prior(prior, x):
    kind, args = prior
    if kind == "uniform":
        a, b = args
        return -math.log(b - a) if a <= x <= b else -math.inf
    if kind == "log_uniform":
        a, b = args
        return -math.log(x * math.log(b / a)) if a <= x <= b else -math.inf
    mu, sigma = args[:2]
    z = (x - mu) / sigma
    log_density = -0.5 * z * z - math.log(sigma * math.sqrt(2.0 * math.pi))
    if kind == "normal":
        return log_density
    a, b = args[2:]
    if not a <= x <= b:
        return -math.inf
    return log_density - math.log(_cdf((b - mu) / sigma) - _cdf((a - mu) / sigma))


def prior_std(prior):
    kind, args = prior
    if kind == "uniform":
        return (args[1] - args[0]) / math.sqrt(12.0)
    if kind == "log_uniform":
        a, b = args
        log_ratio = math.log(b / a)
        mean = (b - a) / log_ratio
        return math.sqrt((b * b - a * a) / (2.0 * log_ratio) - mean * mean)
    mu, sigma = args[:2]
    if kind == "normal":
        return sigma
    alpha, beta = (args[2] - mu) / sigma, (args[3] - mu) / sigma
    mass = _cdf(beta) - _cdf(alpha)
    shift = (_phi(alpha) - _phi(beta)) / mass
    return sigma * math.sqrt(1.0 + (alpha * _phi(alpha) - beta * _phi(beta)) / mass - shift * shift)


def read_table(section, roles_wanted):
    """Columns of a data section's file by role (the `columns` key; '-' ignores a column)."""
    unknown = set(section["entries"]) - DATA_KEYS
    if unknown:
        raise ValueError(f"[{section['type']} {section['name']}]: keys {sorted(unknown)} are not supported here")
    roles = section["entries"]["columns"].split()
    path = os.path.join(section["dir"], section["entries"]["file"])
    columns = [roles.index(r) for r in roles_wanted]
    table = np.loadtxt(path, comments="#", usecols=columns, ndmin=2)
    return {r: table[:, k] for k, r in enumerate(roles_wanted)}


# ---- the model ----------------------------------------------------------------------------------

def mean_anomaly_at_reference(period, e, omega, tc, t_ref):
    """Mean anomaly at t_ref of an orbit in conjunction (f = pi/2 - omega) at tc
    (as tests/fixtures/make_kepler9_fixtures.py)."""
    f = 0.5 * math.pi - omega
    E = 2.0 * math.atan2(math.sqrt(1 - e) * math.sin(f / 2), math.sqrt(1 + e) * math.cos(f / 2))
    return math.remainder(E - e * math.sin(E) + 2.0 * math.pi * (t_ref - tc) / period, 2.0 * math.pi)


class Kepler9Problem:
    """Configuration, data, priors and the TTVFast likelihood; picklable for the worker pool."""

    def __init__(self, config_path):
        globals_, sections = read_config(config_path)
        for key, default in MODEL_DEFAULTS.items():
            if globals_.get(key, default) != default:
                raise ValueError(f"{config_path}: {key} = {globals_[key]} is not implemented here")
        self.t_ref = float(globals_["reference_epoch"])
        self.star_radius = float(globals_.get("star_radius", 1.0)) * SOLAR_RADIUS
        planets = [s for s in sections if s["type"] == "planet"]
        instruments = {s["name"]: s["entries"] for s in sections if s["type"] == "instrument"}
        priors = next((s["entries"] for s in sections if s["type"] == "priors"), None)
        if priors is None:
            raise ValueError(f"{config_path}: no [priors] section")
        self.planets = [s["name"] for s in planets]

        # RV data (sorted by time, as swarmfit) and the instruments in order of appearance.
        rv_rows, self.instruments = [], []
        for s in sections:
            if s["type"] != "rv":
                continue
            entries = s["entries"]
            if "instrument" in entries:
                cols = read_table(s, ("time", "rv", "rv_error"))
                names = [entries["instrument"]] * len(cols["time"])
            else:
                cols = read_table(s, ("time", "rv", "rv_error", "instrument"))
                code = dict(item.split(":", 1) for item in entries["instrument_names"].split())
                names = [code[str(int(c))] for c in cols["instrument"]]
            for name in names:
                if name not in self.instruments:
                    self.instruments.append(name)
            rv_rows += [(t, v, e, self.instruments.index(n))
                        for t, v, e, n in zip(cols["time"], cols["rv"], cols["rv_error"], names)]
        rv = np.array(sorted(rv_rows))
        self.rv_time, self.rv_value, self.rv_error = rv[:, 0], rv[:, 1], rv[:, 2]
        self.rv_instrument = rv[:, 3].astype(int)

        # Transit data per planet, with the least-squares linear ephemeris of its epochs.
        self.transits = []  # (planet index, data epochs - first epoch, observed, error, t0, period, first epoch, slots)
        last = self.rv_time.max() if len(self.rv_time) else self.t_ref
        for s in sections:
            if s["type"] != "transits":
                continue
            cols = read_table(s, ("epoch", "time", "error"))
            epoch = cols["epoch"].astype(int)
            period, t0 = np.polyfit(epoch, cols["time"], 1)
            first = epoch.min()
            self.transits.append((self.planets.index(s["entries"]["planet"]), epoch - first, cols["time"],
                                  cols["error"], t0, period, first, epoch.max() - first + 1))
            last = max(last, cols["time"].max())
        self.transit_norm = sum(float(np.sum(-0.5 * np.log(2.0 * np.pi * tr[3] ** 2))) for tr in self.transits)

        # Parameters in swarmfit's order, their configuration values and priors.
        self.names, self.values = ["star_mass"], [float(globals_["star_mass"])]
        for s in planets:
            for key in PLANET_KEYS:
                self.names.append(f"{key}_{s['name']}")
                self.values.append(float(s["entries"].get(key, PLANET_DEFAULTS.get(key, "nan"))))
        for j, name in enumerate(self.instruments):
            entries = instruments.get(name, {})
            mine = self.rv_instrument == j
            weights = self.rv_error[mine] ** -2
            self.names += [f"offset_{name}", f"jitter_{name}"]
            self.values += [float(entries.get("offset", np.sum(weights * self.rv_value[mine]) / np.sum(weights))),
                            float(entries.get("jitter", 0.0))]
        missing = [n for n in self.names if n not in priors]
        unknown = [n for n in priors if n not in self.names]
        if missing or unknown:
            raise ValueError(f"{config_path}: [priors] lacks {missing}, names unknown {unknown}")
        self.priors = [parse_prior(priors[n], n) for n in self.names]
        self.free = [k for k, p in enumerate(self.priors) if p[0] != "fixed"]
        for k, (kind, args) in enumerate(self.priors):
            if kind == "fixed" and args:
                self.values[k] = args[0]
            elif kind != "fixed" and log_prior(self.priors[k], self.values[k]) == -math.inf:
                # As swarmfit fit: the walkers start around the configuration's values.
                raise ValueError(f"{config_path}: [priors]: the configuration's value of {self.names[k]} "
                                 f"({self.values[k]}) is outside its prior {priors[self.names[k]]}")

        periods = [self.values[self.names.index(f"period_{p}")] for p in self.planets]
        self.time_step = float(globals_.get("time_step", 0)) or min(periods) / 20.0
        self.t_end = last + 0.6 * max(periods)

    @property
    def free_names(self):
        return [self.names[k] for k in self.free]

    def full(self, theta):
        v = list(self.values)
        for k, x in zip(self.free, theta):
            v[k] = x
        return v

    def ttvfast_input(self, v):
        """TTVFast's astrocentric Cartesian input (input_flag 2) of parameters v, via REBOUND's
        Jacobi elements (as tests/fixtures/make_kepler9_fixtures.py); None if some e >= 1."""
        sim = rebound.Simulation()
        sim.G = G
        sim.add(m=v[0])
        for p in range(len(self.planets)):
            period, mass, secosw, sesinw, tc, inc, node = v[1 + 7 * p: 8 + 7 * p]
            e = secosw * secosw + sesinw * sesinw
            if e >= 1.0:
                return None
            omega = math.atan2(sesinw, secosw)
            sim.add(m=mass * EARTH_MASS, P=period, e=e, inc=math.radians(inc), Omega=math.radians(node),
                    omega=omega, M=mean_anomaly_at_reference(period, e, omega, tc, self.t_ref))
        star = sim.particles[0]
        params = [G, v[0]]
        for q in sim.particles[1:]:
            params += [q.m, q.x - star.x, q.y - star.y, q.z - star.z, q.vx - star.vx, q.vy - star.vy, q.vz - star.vz]
        return params

    def model(self, v):
        """TTVFast's model RVs (m/s, without offsets) at the RV times and its transit times at the
        data's epochs, one array per transit dataset (NaN where no model transit); None if e >= 1."""
        params = self.ttvfast_input(v)
        if params is None:
            return None
        positions, rv = ttvfast._ttvfast_fn(params, self.time_step, self.t_ref, self.t_end, len(self.planets), 2,
                                            len(self.rv_time), list(self.rv_time))
        times = positions[2]
        count = times.index(-2.0) if -2.0 in times else len(times)  # TTVFast fills its slots in order
        planet = np.array(positions[0][:count])
        time_ = np.array(times[:count])
        seen = np.array(positions[3][:count]) <= self.star_radius  # sky separation at the transit, AU
        transit_model = []
        for p, epoch, _, _, t0, period, first, slots in self.transits:
            t = time_[(planet == p) & seen]
            index = np.rint((t - t0) / period).astype(int) - first
            inside = (index >= 0) & (index < slots)
            slot = np.full(slots, np.nan)
            slot[index[inside]] = t[inside]
            transit_model.append(slot[epoch])
        return np.array(rv) * AU_PER_DAY, transit_model

    def log_likelihood(self, v):
        out = self.model(v)
        if out is None:
            return -math.inf
        rv_model, transit_model = out
        n = len(self.instruments)
        base = 1 + 7 * len(self.planets)
        offset = np.array(v[base: base + 2 * n: 2])[self.rv_instrument]
        jitter = np.array(v[base + 1: base + 2 * n: 2])[self.rv_instrument]
        var = self.rv_error ** 2 + jitter ** 2
        r = self.rv_value - (rv_model + offset)
        ln_l = float(np.sum(-0.5 * r * r / var - 0.5 * np.log(2.0 * np.pi * var))) + self.transit_norm
        for model, (_, _, observed, error, *_) in zip(transit_model, self.transits):
            if np.isnan(model).any():
                return -math.inf  # an observed transit that the model misses
            ln_l -= 0.5 * float(np.sum(((observed - model) / error) ** 2))
        return ln_l

    def log_prior(self, theta):
        return sum(log_prior(self.priors[k], x) for k, x in zip(self.free, theta))

    def log_posterior(self, theta):
        lp = self.log_prior(theta)
        return lp + self.log_likelihood(self.full(theta)) if lp > -math.inf else -math.inf

    def initial_walkers(self, walkers, rng):
        """Configuration values + N(0, (0.01 prior sd)^2) per free parameter, each walker redrawn
        while its posterior is zero (outside the prior, e >= 1 or a missed transit), as swarmfit fit."""
        guess = np.array([self.values[k] for k in self.free])
        sd = 0.01 * np.array([prior_std(self.priors[k]) for k in self.free])
        out = np.empty((walkers, len(self.free)))
        for w in range(walkers):
            out[w] = guess + sd * rng.standard_normal(len(sd))
            while self.log_posterior(out[w]) == -math.inf:
                out[w] = guess + sd * rng.standard_normal(len(sd))
        return out


# ---- worker pool ----------------------------------------------------------------------------------

_PROBLEM = None


def _init_worker(problem):
    global _PROBLEM
    _PROBLEM = problem


def log_posterior(theta):
    return _PROBLEM.log_posterior(theta)


# ---- diagnostics (Vehtari et al. 2021; as ArviZ / Stan) ------------------------------------------

def split_chains(x):
    """x[param, chain, draw] -> each chain cut in two halves (an odd middle draw dropped)."""
    half = x.shape[2] // 2
    return np.concatenate((x[:, :, :half], x[:, :, -half:]), axis=1)


def z_scale(x):
    """Ranks over all chains and draws of each parameter (ties averaged) -> normal quantiles."""
    flat = x.reshape(x.shape[0], -1)
    ranks = rankdata(flat, method="average", axis=1)
    return ndtri((ranks - 0.375) / (flat.shape[1] + 0.25)).reshape(x.shape)


def basic_rhat(x):
    n = x.shape[2]
    between = n * np.var(x.mean(axis=2), axis=1, ddof=1)
    within = np.var(x, axis=2, ddof=1).mean(axis=1)
    return np.sqrt((between / within + n - 1) / n)


def rank_rhat(x):
    """Rank-normalised split R-hat: the larger of the bulk and the folded (|x - median|) R-hat."""
    split = split_chains(x)
    median = np.median(split.reshape(split.shape[0], -1), axis=1)
    folded = np.abs(split - median[:, None, None])
    return np.maximum(basic_rhat(z_scale(split)), basic_rhat(z_scale(folded)))


def ess(x):
    """ESS of x[param, chain, draw]: multi-chain autocorrelation (FFT autocovariances), Geyer's
    initial positive then monotone sequence, tau >= 1/log10(draws)."""
    params, chains, n = x.shape
    centred = x - x.mean(axis=2, keepdims=True)
    size = 1 << (2 * n - 1).bit_length()
    f = np.fft.rfft(centred, n=size, axis=2)
    acov = np.fft.irfft(f * np.conjugate(f), n=size, axis=2)[:, :, :n] / n
    mean_var = acov[:, :, 0].mean(axis=1) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n + np.var(x.mean(axis=2), axis=1, ddof=1)
    out = np.empty(params)
    for p in range(params):
        rho = 1.0 - (mean_var[p] - acov[p].mean(axis=0)) / var_plus[p]
        rho_t = np.zeros(n)
        rho_t[0], rho_t[1] = 1.0, rho[1]
        even, odd = 1.0, rho[1]
        t = 1
        while t < n - 3 and even + odd > 0.0:
            even, odd = rho[t + 1], rho[t + 2]
            if even + odd >= 0:
                rho_t[t + 1], rho_t[t + 2] = even, odd
            t += 2
        max_t = t - 2
        if even > 0:
            rho_t[max_t + 1] = even
        t = 1
        while t <= max_t - 2:
            if rho_t[t + 1] + rho_t[t + 2] > rho_t[t - 1] + rho_t[t]:
                rho_t[t + 1] = rho_t[t + 2] = 0.5 * (rho_t[t - 1] + rho_t[t])
            t += 2
        tau = -1.0 + 2.0 * np.sum(rho_t[:max_t + 1]) + np.sum(rho_t[max_t + 1:max_t + 2])
        out[p] = chains * n / max(tau, 1.0 / math.log10(chains * n))
    return out


def bulk_ess(x):
    return ess(z_scale(split_chains(x)))


def arviz_check(x):
    """ArviZ's rank R-hat and bulk ESS of x[param, chain, draw], or None without ArviZ."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import arviz
    except ImportError:
        return None
    rhat = np.array([float(arviz.rhat(x[p], method="rank")) for p in range(len(x))])
    bulk = np.array([float(arviz.ess(x[p], method="bulk")) for p in range(len(x))])
    return arviz.__version__, rhat, bulk


# ---- benchmark ------------------------------------------------------------------------------------

def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=os.path.join(root, "examples", "kepler9.cfg"))
    parser.add_argument("--walkers", type=int, default=48)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check-every", type=int, default=200, help="steps between convergence checks")
    parser.add_argument("--max-seconds", type=float, default=1800.0)
    parser.add_argument("--quick", action="store_true", help="smoke run: --max-seconds 60")
    parser.add_argument("--processes", type=int, default=2, help="worker processes (E1: 2 CPU cores)")
    parser.add_argument("--output", default="e1_ttvfast_emcee.json")
    args = parser.parse_args()
    max_seconds = 60.0 if args.quick else args.max_seconds

    try:
        problem = Kepler9Problem(args.config)
    except ValueError as error:
        sys.exit(f"e1_ttvfast_emcee: {error}")
    names = problem.free_names
    print(f"E1 TTVFast {ttvfast.__version__} + emcee {emcee.__version__}: {args.config}")
    print(f"  {len(problem.rv_time)} RVs, {sum(len(t[1]) for t in problem.transits)} transit times; "
          f"step {problem.time_step:.6f} d from {problem.t_ref} to {problem.t_end:.3f}")
    print(f"  {len(names)} free parameters: {' '.join(names)}")

    # One likelihood at the configuration's values, serial.
    guess = problem.values
    ln_l_guess = problem.log_likelihood(guess)
    calls = 200
    t0 = time.perf_counter()
    for _ in range(calls):
        problem.log_likelihood(guess)
    per_call = (time.perf_counter() - t0) / calls
    print(f"  ln L at the configuration's values {ln_l_guess:.4f}; one likelihood {per_call * 1e3:.3f} ms "
          f"(mean of {calls} serial calls)")
    if not math.isfinite(ln_l_guess):
        sys.exit("e1_ttvfast_emcee: the configuration's values have ln L = -inf")

    rng = np.random.default_rng(args.seed)
    start = problem.initial_walkers(args.walkers, rng)
    load_before = os.getloadavg()
    diagnostics_seconds = 0.0
    converged = out_of_time = False
    wall0 = time.perf_counter()
    with multiprocessing.Pool(args.processes, initializer=_init_worker, initargs=(problem,)) as pool:
        sampler = emcee.EnsembleSampler(args.walkers, len(names), log_posterior, pool=pool)
        sampler.random_state = np.random.RandomState(args.seed).get_state()
        state = start
        while not (converged or out_of_time):
            # The chain goes on in chunks (diagnostics between them); emcee's condition-number
            # check is for a fresh start, not a continuation whose walkers are what they are.
            for state in sampler.sample(state, iterations=args.check_every,
                                        skip_initial_state_check=sampler.iteration > 0):
                if time.perf_counter() - wall0 >= max_seconds:
                    out_of_time = True
                    break
            d0 = time.perf_counter()
            chain = sampler.get_chain()
            kept = np.ascontiguousarray(chain[len(chain) // 2:].transpose(2, 1, 0))  # [param, walker, step]
            rhat, bulk = rank_rhat(kept), bulk_ess(kept)
            diagnostics_seconds += time.perf_counter() - d0
            converged = bool(np.all(rhat < RHAT_TARGET) and np.all(bulk >= ESS_TARGET))
            print(f"  {time.perf_counter() - wall0:8.1f} s  step {len(chain):6d}  max R-hat {rhat.max():.4f}  "
                  f"min bulk ESS {bulk.min():8.1f}  ln p max {state.log_prob.max():.2f}", flush=True)
    wall = time.perf_counter() - wall0

    steps = sampler.iteration
    samples = kept.reshape(len(names), -1)
    q16, q50, q84 = np.percentile(samples, [16, 50, 84], axis=1)
    result = {
        "benchmark": "E1 peer: TTVFast + emcee",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "config": os.path.relpath(args.config, root),
        "machine": {"cpu": cpu_model(), "cores_used": args.processes, "logical_cpus": os.cpu_count(),
                    "python": platform.python_version(),
                    "load_average_1_5_15_min_before": load_before, "load_average_1_5_15_min_after": os.getloadavg()},
        "versions": {"ttvfast": ttvfast.__version__, "emcee": emcee.__version__, "numpy": np.__version__,
                     "scipy": scipy.__version__, "rebound": rebound.__version__},
        "time_step_days": problem.time_step,
        "span_days": [problem.t_ref, problem.t_end],
        "walkers": args.walkers,
        "seed": args.seed,
        "steps": steps,
        "likelihood_evaluations": args.walkers * (steps + 1),
        "wall_seconds": wall,
        "diagnostics_seconds": diagnostics_seconds,
        "seconds_per_likelihood": per_call,
        "ln_likelihood_at_config_values": ln_l_guess,
        "acceptance_fraction": float(np.mean(sampler.acceptance_fraction)),
        "converged": converged,
        "targets": {"rhat_below": RHAT_TARGET, "bulk_ess_at_least": ESS_TARGET},
        "max_rhat": float(rhat.max()),
        "min_bulk_ess": float(bulk.min()),
        "ess_per_second": float(bulk.min() / wall),
        "parameters": {n: {"median": float(q50[k]), "p16": float(q16[k]), "p84": float(q84[k]),
                           "rhat": float(rhat[k]), "bulk_ess": float(bulk[k])} for k, n in enumerate(names)},
    }
    check = arviz_check(kept)
    if check is not None:
        version, rhat_az, bulk_az = check
        result["versions"]["arviz"] = version
        result["arviz_agreement"] = {"max_abs_rhat_difference": float(np.max(np.abs(rhat_az - rhat))),
                                     "max_rel_bulk_ess_difference": float(np.max(np.abs(bulk_az / bulk - 1)))}
        print(f"  ArviZ {version}: R-hat within {result['arviz_agreement']['max_abs_rhat_difference']:.2e}, "
              f"bulk ESS within {result['arviz_agreement']['max_rel_bulk_ess_difference']:.2e} (relative)")
    with open(args.output, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")

    print(f"  {'converged' if converged else 'NOT converged'} after {steps} steps "
          f"({result['likelihood_evaluations']} likelihoods), {wall:.1f} s wall "
          f"({diagnostics_seconds:.1f} s diagnostics); max R-hat {rhat.max():.4f}, min bulk ESS {bulk.min():.1f}, "
          f"{result['ess_per_second']:.3f} ESS/s; acceptance {result['acceptance_fraction']:.3f}")
    for k, n in enumerate(names):
        print(f"  {n:18s} {q50[k]:.12g} -{q50[k] - q16[k]:.3g} +{q84[k] - q50[k]:.3g}  "
              f"R-hat {rhat[k]:.4f}  ESS {bulk[k]:.0f}")
    print(f"  wrote {args.output}")


if __name__ == "__main__":
    main()
