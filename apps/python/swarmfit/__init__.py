"""swarmfit from Python: N-body fits of planetary systems to radial velocities and transit times
(DEMCMC, one batched ensemble integration per half-generation, on CPU cores or a GPU) and
ensembles of N-body integrations, over the same C++ libraries as the ``swarmfit`` command.

    model = swarmfit.Model.from_config("fit.cfg")        # or swarmfit.Model(star_mass=..., planets=..., ...)
    model.log_posterior(theta)                            # theta (n_walkers, model.ndim): one batched call
    run = swarmfit.fit(model, output="fit.h5", generations=2000)
    run.summary(); run.posterior; run.to_arviz()
    swarmfit.integrate(masses, positions, velocities, integrator="mvs", time_step=1e-3, t_end=10.0)
    swarmfit.catalog("archive.cfg", "fits", jobs=2, generations=2000)   # many targets, one summary

Bad input raises swarmfit.InputError (a ValueError) with the command line's one-line message.
"""
from ._core import InputError, cuda_available, status_name
from ._core import version as __version__
from .catalog import catalog
from .engine import Integration, integrate, integrators
from .model import Model, TransitTimes, status_names
from .run import Run, fit, open_run

InputError.__module__ = "swarmfit"
InputError.__doc__ = ("Bad input (configuration, data, keys, array shapes), refused before any work: one line "
                      "naming the file, line or key, as `swarmfit: error: ...` of the command line.")

__all__ = ["InputError", "Integration", "Model", "Run", "TransitTimes", "catalog", "cuda_available", "fit", "integrate",
           "integrators", "open_run", "status_name", "status_names"]
