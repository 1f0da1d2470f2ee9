"""The ensemble N-body engine from Python: swarmfit.integrate (what `swarmfit integrate` does, with
the initial states as arrays) and swarmfit.integrators (the registry, with citations)."""
from collections import namedtuple

import numpy as np

from . import _core
from ._core import InputError
from .model import overrides, status_names

Integration = namedtuple("Integration", "positions velocities times steps status status_names energy_error")
Integration.__doc__ = """The final states of swarmfit.integrate: positions and velocities (M, n, 3)
(inertial), times (M,) reached, steps (M,) taken, status (M,) codes and their names (README, "Status
codes"), energy_error (M,) relative energy errors (E - E0) / |E0|. Without a leading system axis
where the input had none."""


def integrators():
    """Every registered integrator: dicts with name, description, citation, order, adaptive,
    symplectic and parameters (the keys it reads), as ``swarmfit integrate --help`` lists them."""
    return _core.integrators()


def integrate(masses, positions, velocities, *, t_end, time_step, integrator="mvs", G=1.0, backend="cpu",
              times=None, radii=None, **keys):
    """Integrate an ensemble of systems to time t_end, as ``swarmfit integrate`` does.

    masses (M, n), positions and velocities (M, n, 3): M systems of n bodies (2 to 16), inertial,
    body 0 the star, in units where the constant of gravitation is G (1: Swarm-NG's units;
    2.959122082855911e-4 for AU, day and solar mass); or (n,) and (n, 3) for one system. times
    (M,): start times (default 0); radii (M, n): physical radii for ``collisions=True``.
    integrator: any of swarmfit.integrators(); time_step: the (first) step; backend: cpu or cuda.
    keys: the other keys of ``swarmfit integrate`` (README, "Commands"): ``error_tolerance``,
    ``time_step_factor``, ``min_time_step``, ``max_time_step``, ``mvs_coordinates``,
    ``mvs_splitting``, ``rmax``, ``stop_on_unbound``, ``close_approach``, ``collisions``,
    ``max_steps``, ``threads``, ``cuda_layout``, ``reproducible``. Bad input raises InputError
    with the command's message. Returns an Integration."""
    m = np.asarray(masses, dtype=np.float64)
    single = m.ndim == 1
    m = np.atleast_2d(m)
    count, bodies = m.shape if m.ndim == 2 else (0, 0)
    if m.ndim != 2:
        raise InputError(f"masses: expected shape (M, n) or (n,), got {np.shape(masses)}")

    def states(values, what):
        x = np.asarray(values, dtype=np.float64)
        x = x[np.newaxis] if single and x.ndim == 2 else x
        if x.shape != (count, bodies, 3):
            raise InputError(f"{what}: expected shape ({count}, {bodies}, 3) for masses of shape {m.shape}, "
                             f"got {np.shape(values)}")
        return np.ascontiguousarray(x)

    def per_system(values, what, shape, default):
        if values is None:
            return np.full(shape, default)
        x = np.asarray(values, dtype=np.float64)
        x = x.reshape((1,) + x.shape) if single else x
        if x.shape != shape:
            raise InputError(f"{what}: expected shape {shape[1:] if single else shape}, got {np.shape(values)}")
        return np.ascontiguousarray(x)

    x, v = states(positions, "positions"), states(velocities, "velocities")
    t0 = per_system(times, "times", (count,), 0.0)
    r = per_system(radii, "radii", (count, bodies), 0.0)
    given = dict(integrator=integrator, time_step=time_step, destination_time=t_end, G=G, backend=backend)
    given.update(keys)
    out = _core.integrate(np.ascontiguousarray(m), x, v, t0, r, overrides(given))
    names = status_names(out["status"])
    if single:
        return Integration(out["positions"][0], out["velocities"][0], float(out["times"][0]), float(out["steps"][0]),
                           int(out["status"][0]), names[0], float(out["energy_error"][0]))
    return Integration(out["positions"], out["velocities"], out["times"], out["steps"], out["status"], names,
                       out["energy_error"])
