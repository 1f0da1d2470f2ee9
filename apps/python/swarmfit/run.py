"""Fits and their run files: swarmfit.fit (the pipeline of `swarmfit fit`), swarmfit.open_run and
swarmfit.Run (the kept chain as numpy arrays and pandas DataFrames, the posterior summary of
`swarmfit summary`, and ArviZ's InferenceData)."""
import os

import numpy as np
import pandas as pd

from . import _core
from .model import Model, overrides
from .progress import ProgressDisplay


def fit(model, output=None, *, resume=False, callback=None, **keys):
    """Run the DEMCMC fit of a model, as ``swarmfit fit --config FILE key=value ...`` does.

    model: a swarmfit.Model or the path of a configuration file. output: the HDF5 run file (the
    result and the checkpoint; default the configuration's ``output``, fit.h5). keys: fit keys
    and model keys as key=value overrides (``generations=2000``, ``walkers=64``, ``seed=3``,
    ``optimize=300``, ``overwrite=True``, ``backend="cuda"``, ``progress="off"``; README,
    "Fitting"). resume: continue the run in ``output`` (start it where there is none), as
    ``--resume``. The same configuration, keys and seed give bitwise the chain of the command.

    Progress (key ``progress``, default auto): a line on stderr in a terminal, an updating line in
    a Jupyter notebook; callback(report), if given, is called with every progress report (a dict:
    phase "optimize" or "sample", generation, generations, finished, acceptance, worst_rhat,
    min_ess, eta_seconds, best_log_posterior). Ctrl-C (KeyboardInterrupt, also raised by the
    callback) stops the fit as the command's SIGINT does: the state is saved in the run file, then
    KeyboardInterrupt is raised; ``resume=True`` continues it, bitwise as if never stopped.
    Returns a Run; bad input raises swarmfit.InputError before any work or file."""
    if isinstance(model, Model):
        path, given = model.path, model.overrides
    else:
        path, given = os.fspath(model), []
    if output is not None:
        keys["output"] = output
    display = ProgressDisplay()

    def report(kind, info):
        display(kind, info)
        if callback is not None and kind == "progress":
            callback(info)

    try:
        # The model's keys, then the call's: a key of both takes the call's value (the command line
        # refuses a key given twice).
        merged = {item.split("=", 1)[0]: item for item in given}
        merged.update({item.split("=", 1)[0]: item for item in overrides(keys)})
        result = _core.fit(path, list(merged.values()), bool(resume), report)
    finally:
        display.close()
    run = Run(result)
    if run.fit["interrupted_by_keyboard"] and not run.fit["state_saved"]:
        raise KeyboardInterrupt("swarmfit.fit: interrupted in the start phase; nothing written: the same call "
                                "starts again from the beginning")
    if run.fit["interrupted_by_keyboard"]:
        raise KeyboardInterrupt(f"swarmfit.fit: interrupted at generation {run.generation}; state saved in "
                                f"{run.path}: continue with swarmfit.fit(..., resume=True)")
    return run


def open_run(path):
    """The run file of a fit (``swarmfit fit``'s or swarmfit.fit's output) as a Run."""
    return Run(_core.open_run(os.fspath(path)))


class Run:
    """A fit's kept chain and what it says, read from its run file or returned by swarmfit.fit.

    Arrays (the run file's /chain, README "Run file layout"): ``chain`` [draw][walker][free],
    ``log_likelihood``, ``log_prior``, ``log_posterior``, ``status``, ``accepted`` [draw][walker],
    ``generations`` [draw]. ``free_names`` names the sampled parameters, ``names`` every model
    parameter (with ``units``, ``priors``, ``values``). ``first_draw`` is the first draw after the
    burn-in (the fit's ``burn_in``; default the second half of the draws). From swarmfit.fit also
    ``converged``, ``interrupted``, ``acceptance``, ``walkers_reset``, ``timing`` (seconds)."""

    def __init__(self, core):
        self._core = core
        self.path = core.path
        self.names = list(core.names)
        self.units = dict(zip(self.names, core.units))
        self.priors = dict(zip(self.names, core.priors))
        self.values = dict(zip(self.names, map(float, core.values)))
        self.free = np.asarray(core.free, dtype=np.int64)
        self.free_names = [self.names[k] for k in self.free]
        self.seed = core.seed
        self.thin = core.thin
        self.generation = core.generation
        self.attributes = dict(core.attributes)
        self.first_draw = core.first_draw
        chain = core.chain()
        self.chain = chain["parameters"]
        self.log_likelihood = chain["log_likelihood"]
        self.log_prior = chain["log_prior"]
        self.log_posterior = chain["log_posterior"]
        self.status = chain["status"]
        self.accepted = chain["accepted"]
        self.generations = chain["generation"]
        self.fit = dict(core.fit)
        self.converged = self.fit.get("converged")
        self.interrupted = self.fit.get("interrupted")
        self.acceptance = self.fit.get("acceptance")
        self.walkers_reset = self.fit.get("walkers_reset")
        self.timing = dict(self.fit.get("timing", {}))

    @property
    def num_draws(self):
        return self.chain.shape[0]

    @property
    def num_walkers(self):
        return self.chain.shape[1]

    def __repr__(self):
        return (f"<swarmfit.Run {self.path!r}: {self.num_draws} draws x {self.num_walkers} walkers x "
                f"{len(self.free_names)} free parameters, generation {self.generation}, "
                f"burn-in {self.first_draw} draws>")

    def _first(self, burn_in):
        return self.first_draw if burn_in is None else self._core.first_kept_draw(int(burn_in))

    @property
    def posterior(self):
        """The kept draws after the burn-in: a DataFrame with columns draw, walker and one per free parameter."""
        first = self.first_draw
        kept = self.chain[first:]
        draws, walkers = kept.shape[:2]
        frame = pd.DataFrame(kept.reshape(draws * walkers, -1), columns=self.free_names)
        frame.insert(0, "walker", np.tile(np.arange(walkers), draws))
        frame.insert(0, "draw", np.repeat(np.arange(first, first + draws), walkers))
        return frame

    def summary(self, burn_in=None):
        """The posterior table of ``swarmfit summary`` (and OUTPUT_summary.csv), indexed by parameter:
        median, 16/84% and 2.5/97.5% quantiles, mean, sd, R-hat, bulk and tail ESS of each free
        parameter, then derived quantities per planet (derived = 1). burn_in: generations to leave
        out, as ``swarmfit summary --burn-in``; default the run's own burn-in (first_draw)."""
        columns = self._core.summary(self._first(burn_in))
        frame = pd.DataFrame(dict(columns))
        frame["derived"] = frame["derived"].astype(bool)
        return frame.set_index("parameter")

    def to_arviz(self, burn_in=None):
        """The kept draws after the burn-in as arviz.InferenceData, walkers as chains (the README's
        h5py recipe): posterior (one variable per free parameter) and sample_stats lp (ln posterior)."""
        import arviz as az

        first = self._first(burn_in)
        kept = self.chain[first:]
        posterior = {name: kept[:, :, k].T for k, name in enumerate(self.free_names)}
        sample_stats = {"lp": self.log_posterior[first:].T}
        return az.from_dict(posterior=posterior, sample_stats=sample_stats,
                            attrs={"swarmfit_run": self.path, "seed": int(self.seed)})
