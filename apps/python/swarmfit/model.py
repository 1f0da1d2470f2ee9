"""swarmfit.Model: a planetary-system model with its RV and transit-time data, its priors and its
batched log-likelihood (one ensemble integration per call, on the CPU or the GPU)."""
import numbers
import os
import shutil
import tempfile
import weakref
from collections import namedtuple

import numpy as np
import pandas as pd

from . import _core
from ._core import InputError

TransitTimes = namedtuple("TransitTimes", "model observed error planet epoch status")
TransitTimes.__doc__ = """Model times of the observed transits (Model.transit_times).

model: (n, rows) or (rows,) BJD_TDB, NaN where the model has no such transit; observed, error:
(rows,) the data (days); planet (rows,) planet names, epoch (rows,) epochs as the data number them;
status: (n,) or one status code. Rows are sorted by planet (star outwards), then epoch."""


def format_value(value):
    """A Python value as the configuration files and key=value overrides write it, exactly
    (floats by their shortest round-trip repr, booleans as true/false)."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    return os.fspath(value) if isinstance(value, os.PathLike) else str(value)


def overrides(keys):
    """Keyword arguments as the command line's key=value overrides."""
    return [f"{key}={format_value(value)}" for key, value in keys.items()]


def status_names(status):
    """The name of each status code (README, "Status codes")."""
    return [_core.status_name(int(code)) for code in np.ravel(status)]


class Model:
    """A planetary-system model, its data, priors and settings, as `swarmfit fit` reads them.

    Two ways to make one:

    - ``Model.from_config(path, **overrides)``: a configuration file (README, "Models and data",
      "Fitting"); keyword arguments are the command line's key=value overrides
      (``backend="cuda"``, ``threads=2``, ``time_step=0.5``).
    - ``Model(star_mass=..., reference_epoch=..., planets=..., rv=..., transits=...,
      instruments=..., priors=..., **settings)``: built in Python. ``planets`` maps each planet's
      name (star outwards) to its parameter values (``period``, ``mass`` or ``K``, ``secosw``,
      ``sesinw``, ``tc``, ``inc``, ``node``, ...); ``rv`` has arrays ``time`` (BJD_TDB), ``rv``,
      ``error`` (m/s) and ``instrument`` (one name, or one per point); ``transits`` maps planet
      names to arrays ``epoch``, ``time`` (BJD_TDB), ``error`` (days); ``instruments`` maps
      instrument names to ``offset`` and ``jitter`` (m/s); ``priors`` maps parameter names to
      priors as the files write them (``"uniform(9.7, 9.9)"``, ``"fixed"``); ``settings`` are
      global keys (``star_radius``, ``integrator``, fit keys such as ``walkers``). The model is
      written as plain text tables and a configuration file into a temporary folder (removed with
      the model; ``model.config_text`` shows it) and loaded from there, through the same reader as
      every configuration: one loading path, the same checks and messages.

    Parameters: ``names`` lists every model parameter (README, "Models and data", with ``units``);
    the sampled ones, ``free_names`` (``ndim`` of them), are those whose prior is not ``fixed``,
    or every parameter when the configuration has no [priors] section (then ``log_prior`` and
    ``log_posterior`` raise InputError). Every ``theta`` is an array of shape (n, ndim), one row
    per parameter set (walker), or (ndim,) for one; a batch is ONE call of the batched
    likelihood: one ensemble integration on the model's backend, the GIL released.

    Bad input raises swarmfit.InputError with the one-line message of the command line.
    """

    def __init__(self, *, star_mass, reference_epoch, planets, rv=None, transits=None, instruments=None,
                 priors=None, **settings):
        folder = tempfile.mkdtemp(prefix="swarmfit_model_")
        self._cleanup = weakref.finalize(self, shutil.rmtree, folder, True)
        try:
            path = _write_configuration(folder, star_mass, reference_epoch, planets, rv, transits, instruments,
                                        priors, settings)
            self._load(path, [])
        except Exception:
            self._cleanup()
            raise

    @classmethod
    def from_config(cls, path, **overrides_):
        """The model of a configuration file, with key=value overrides as keyword arguments."""
        model = cls.__new__(cls)
        model._cleanup = None
        model._load(os.fspath(path), overrides(overrides_))
        return model

    def _load(self, path, override_list):
        self._overrides = list(override_list)
        self._core = _core.Model(path, self._overrides)
        self.names = list(self._core.names)
        self.free = np.asarray(self._core.free, dtype=np.int64)
        self.free_names = [self.names[k] for k in self.free]
        self.ndim = len(self.free_names)
        self.units = dict(zip(self.names, self._core.units))
        self.meanings = dict(zip(self.names, self._core.meanings))
        self.values = dict(zip(self.names, map(float, self._core.values)))
        self.priors = dict(zip(self.names, self._core.priors)) if self._core.has_priors else {}
        self.settings = {key: value for key, (value, _) in self._core.settings.items()}
        self.planets = list(self._core.planets)
        self.instruments = list(self._core.instruments)

    # ---- what the model is
    path = property(lambda self: self._core.path, doc="the configuration file")
    config_text = property(lambda self: self._core.config_text, doc="the text of every file read")
    reference_epoch = property(lambda self: self._core.reference_epoch, doc="BJD_TDB: the elements osculate here")
    time_step = property(lambda self: self._core.time_step, doc="the integration step, days")
    integrator = property(lambda self: self._core.integrator)
    backend = property(lambda self: self._core.backend, doc="cpu or cuda")
    overrides = property(lambda self: list(self._overrides), doc="the key=value overrides it was loaded with")

    @property
    def initial(self):
        """The configuration's values of the free parameters, shape (ndim,): a starting point."""
        return np.array([self.values[name] for name in self.free_names])

    @property
    def rv_data(self):
        """The RV data (sorted by time): time (BJD_TDB), rv, error (m/s), instrument."""
        d = self._core.rv_data()
        names = np.array(d["instruments"], dtype=object)
        return pd.DataFrame({"time": d["time"], "rv": d["rv"], "error": d["error"],
                             "instrument": names[d["instrument"]] if len(d["time"]) else []})

    @property
    def transit_data(self):
        """The transit times in the order of transit_times(): planet, epoch, time (BJD_TDB), error (days)."""
        d = self._core.transit_rows()
        names = np.array(d["planets"], dtype=object)
        return pd.DataFrame({"planet": names[d["planet"]] if len(d["time"]) else [], "epoch": d["epoch"],
                             "time": d["time"], "error": d["error"]})

    def __repr__(self):
        return (f"<swarmfit.Model {self.path!r}: planets {', '.join(self.planets)}; {len(self.names)} parameters, "
                f"{self.ndim} free; {len(self.rv_data)} RVs, {len(self.transit_data)} transit times; "
                f"{self.integrator} on {self.backend}>")

    # ---- batched evaluations
    def _rows(self, theta, width=None, what="theta"):
        if self.settings.get("ephemeris") == "mean":
            # The mean-ephemeris coordinates are anchored by a fit (models/ephemeris.hpp): these
            # evaluations would read them as osculating elements.
            raise InputError(f"{self.path}: ephemeris = mean: its periods and tc are mean-ephemeris coordinates "
                             "anchored by a fit, not yet available in swarmfit.Model (a run's draws in these "
                             "coordinates are not osculating elements; its predictive draws hold their model curves)")
        width = self.ndim if width is None else width
        x = np.asarray(theta, dtype=np.float64)
        if x.ndim not in (1, 2) or x.shape[-1] != width:
            raise InputError(f"{what}: expected shape (n, {width}) or ({width},), one row of the free parameters "
                             f"({', '.join(self.free_names)}) per set; got shape {x.shape}")
        return np.ascontiguousarray(np.atleast_2d(x)), x.ndim == 1

    def log_likelihood(self, theta, return_status=False):
        """ln L of each row of theta (free parameters), -inf where the physics cannot integrate it.

        Returns a float64 array (n,) (a float for a 1-D theta); with return_status, also the status
        codes and their names (README, "Status codes")."""
        rows, single = self._rows(theta)
        values, status = self._core.log_likelihood(rows)
        return _out(values, status, single, return_status)

    def log_prior(self, theta):
        """ln prior of each row (the normalised densities of the [priors] section), -inf outside."""
        rows, single = self._rows(theta)
        values = self._core.log_prior(rows)
        return float(values[0]) if single else values

    def log_posterior(self, theta, return_status=False):
        """ln prior + ln L of each row, as the sampler sees it: rows outside the prior are not
        integrated (-inf, status "outside prior"). Vectorised for emcee:
        ``emcee.EnsembleSampler(nwalkers, model.ndim, model.log_posterior, vectorize=True)``."""
        rows, single = self._rows(theta)
        values, _, _, status = self._core.log_posterior(rows)
        return _out(values, status, single, return_status)

    def stability(self, theta, horizon_orbits=1e4, integrator="whfast", steps_per_orbit=20.0, close_approach=1.0,
                  megno_limit=3.0, backend="cpu", threads=0):
        """Integrates each row of theta (free parameters) for `horizon_orbits` orbits of its outermost
        planet with the chaos indicators on, as ``swarmfit stability`` does (README, "Stability").

        Returns a pandas DataFrame, one row per set, the columns of the command's CSV: status,
        survived, time_days, orbits, megno, megno_slope (REBOUND's sim.lyapunov()),
        lyapunov_per_day (finite-time exponent),
        closest_hill, chaotic (MEGNO > megno_limit), max_e_<planet>, max_da_<planet>, amd_stable,
        hill_stable, crossing."""
        import pandas as pd

        rows, _ = self._rows(theta)
        r = self._core.stability(rows, float(horizon_orbits), integrator, float(steps_per_orbit),
                                 float(close_approach), float(megno_limit), backend, int(threads))
        table = {k: r[k] for k in ("status", "survived", "time_days", "orbits", "megno", "megno_slope",
                                   "lyapunov_per_day", "closest_hill", "chaotic")}
        table["status"] = status_names(r["status"])
        for key in ("survived", "chaotic"):
            table[key] = r[key].astype(bool)
        for q, planet in enumerate(self.planets):
            table["max_e_" + planet] = r["max_e"][:, q]
            table["max_da_" + planet] = r["max_da"][:, q]
        for key in ("amd_stable", "hill_stable", "crossing"):
            table[key] = r[key].astype(bool)
        return pd.DataFrame(table)

    def expand(self, theta):
        """Rows of free parameters -> rows of every parameter (names), the fixed ones from the configuration."""
        rows, single = self._rows(theta)
        full = self._core.expand(rows)
        return full[0] if single else full

    # ---- predictions
    def rv(self, theta, times, return_status=False):
        """The star's RV (m/s, barycentric, positive receding, no instrument offset) at the given
        times (BJD_TDB, after the reference epoch, any order): shape (n, len(times)) or (len(times),)."""
        rows, single = self._rows(theta)
        t = np.asarray(times, dtype=np.float64)
        if t.ndim != 1:
            raise InputError(f"times: expected a 1-D array, got shape {t.shape}")
        order = np.argsort(t, kind="stable")
        curve, status = self._core.rv_curve(rows, np.ascontiguousarray(t[order]))
        values = np.empty_like(curve)
        values[:, order] = curve
        return _out(values, status, single, return_status)

    def transit_times(self, theta):
        """The model's times of the observed transits (TransitTimes: model times with the observed rows)."""
        rows, single = self._rows(theta)
        curves = self._core.curves(rows)
        data = self.transit_data
        model = curves["transits"][0] if single else curves["transits"]
        status = int(curves["status"][0]) if single else curves["status"]
        return TransitTimes(model, data["time"].to_numpy(), data["error"].to_numpy(), data["planet"].to_numpy(),
                            data["epoch"].to_numpy(), status)


def _out(values, status, single, return_status):
    if single:
        values, status = (values[0], int(status[0]))
        values = float(values) if np.ndim(values) == 0 else values
        return (values, status, _core.status_name(status)) if return_status else values
    return (values, status, status_names(status)) if return_status else values


def _section(name, values):
    lines = [f"\n[{name}]"]
    lines += [f"{key} = {format_value(value)}" for key, value in values.items()]
    return lines


def _column(table, key, what, length=None):
    try:
        values = np.asarray(table[key])
    except (KeyError, IndexError, TypeError, ValueError):
        raise InputError(f"{what}: needs '{key}'") from None
    if values.ndim != 1 or (length is not None and len(values) != length):
        raise InputError(f"{what}: '{key}' must be 1-D with one value per row"
                         + (f" ({length})" if length is not None else "") + f", got shape {values.shape}")
    return values


def _numbers(values):
    return [format_value(float(v)) for v in values]


def _write_configuration(folder, star_mass, reference_epoch, planets, rv, transits, instruments, priors, settings):
    """The configuration file (and data tables) of a model built in Python; returns its path."""
    lines = ["# A model built in Python (swarmfit.Model), written in the format of configuration files.",
             f"star_mass = {format_value(star_mass)}", f"reference_epoch = {format_value(reference_epoch)}"]
    lines += [f"{key} = {format_value(value)}" for key, value in settings.items()]
    for name, values in planets.items():
        lines += _section(f"planet {name}", values)
    for name, values in (instruments or {}).items():
        lines += _section(f"instrument {name}", values)
    if rv is not None:
        time = _column(rv, "time", "rv")
        value, error = _column(rv, "rv", "rv", len(time)), _column(rv, "error", "rv", len(time))
        instrument = rv["instrument"] if "instrument" in rv else None
        if instrument is None or isinstance(instrument, str):
            rows = [" ".join(r) for r in zip(_numbers(time), _numbers(value), _numbers(error))]
            name = instrument or "RV"
            lines += _section(f"rv {name}", {"file": "rv.txt", "columns": "time rv rv_error"})
        else:
            instrument = _column(rv, "instrument", "rv", len(time))
            rows = [" ".join(r) for r in zip(_numbers(time), _numbers(value), _numbers(error), map(str, instrument))]
            lines += _section("rv data", {"file": "rv.txt", "columns": "time rv rv_error instrument"})
        with open(os.path.join(folder, "rv.txt"), "w") as out:
            out.write("# time (BJD_TDB) rv (m/s) error (m/s) [instrument]\n" + "\n".join(rows) + "\n")
    for planet, table in (transits or {}).items():
        time = _column(table, "time", f"transits of {planet}")
        epoch = _column(table, "epoch", f"transits of {planet}", len(time))
        error = _column(table, "error", f"transits of {planet}", len(time))
        file = f"transits_{planet}.txt"
        with open(os.path.join(folder, file), "w") as out:
            out.write("# epoch time (BJD_TDB) error (days)\n")
            out.write("\n".join(f"{int(e)} {t} {s}" for e, t, s in zip(epoch, _numbers(time), _numbers(error))) + "\n")
        lines += _section(f"transits {planet}", {"file": file, "planet": planet, "columns": "epoch time error"})
    if priors:
        lines += _section("priors", priors)
    path = os.path.join(folder, "model.cfg")
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")
    return path
