#!/usr/bin/env python3
"""Long-run round-off of the whfast map, swarmfit against REBOUND's WHFast: a star (1) and a planet
(1e-3, a = 1, e = 0.1, random phases) in the barycentric frame, G = 1, step P/20, for 1e4 ... 1e7
steps. For two bodies the map is the exact Kepler flow, so every energy error is round-off: the rms
relative energy error over the systems against the number of steps shows how it grows (Brouwer's
law: as the square root of the steps for unbiased rounding, linearly for a biased one; Rein &
Tamayo 2015, sec. 4). --frame inertial starts the star at rest instead, so the centre of mass
drifts and both codes lose digits to the growing inertial coordinates.

    PYTHONPATH=build-cpu/python python3 bench/roundoff_whfast.py --max-steps 1e7
"""
import argparse
import time

import numpy as np
import rebound

import swarmfit


def initial(count, mass, barycentric, rng):
    m = np.zeros((count, 2))
    m[:, 0], m[:, 1] = 1.0, mass
    x, v = np.zeros((count, 2, 3)), np.zeros((count, 2, 3))
    phase = rng.uniform(0, 2 * np.pi, count)
    e, r = 0.1, 0.9  # pericentre of a = 1
    speed = np.sqrt((1 + mass) * (1 + e) / r)
    x[:, 1, 0], x[:, 1, 1] = r * np.cos(phase), r * np.sin(phase)
    v[:, 1, 0], v[:, 1, 1] = -speed * np.sin(phase), speed * np.cos(phase)
    if barycentric:
        total = m.sum(1)[:, None]
        x -= ((m[:, :, None] * x).sum(1) / total)[:, None, :]
        v -= ((m[:, :, None] * v).sum(1) / total)[:, None, :]
    return m, x, v


def rebound_errors(m, x, v, steps, h):
    errors = []
    for k in range(len(m)):
        sim = rebound.Simulation()
        sim.G = 1.0
        for i in range(2):
            sim.add(m=m[k, i], x=x[k, i, 0], y=x[k, i, 1], z=x[k, i, 2], vx=v[k, i, 0], vy=v[k, i, 1], vz=v[k, i, 2])
        sim.integrator = "whfast"
        sim.dt = h
        e0 = sim.energy()
        sim.integrate(steps * h, exact_finish_time=0)
        sim.synchronize()
        errors.append((sim.energy() - e0) / abs(e0))
    return np.array(errors)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--systems", type=int, default=64, help="swarmfit's ensemble (REBOUND: --rebound-systems)")
    p.add_argument("--rebound-systems", type=int, default=16)
    p.add_argument("--max-steps", type=float, default=1e6)
    p.add_argument("--frame", choices=["barycentric", "inertial"], default="barycentric")
    p.add_argument("--threads", type=int, default=0)
    a = p.parse_args()
    rng = np.random.default_rng(1)
    m, x, v = initial(a.systems, 1e-3, a.frame == "barycentric", rng)
    h = 2 * np.pi / 20
    print(f"{a.frame} frame, whfast at P/20; rms relative energy error (swarmfit {a.systems} systems, REBOUND "
          f"{a.rebound_systems}), seconds")
    steps = 1e4
    while steps <= a.max_steps:
        t0 = time.time()
        ours = swarmfit.integrate(m, x, v, t_end=steps * h, time_step=h, integrator="whfast", G=1.0,
                                  threads=a.threads).energy_error
        t1 = time.time()
        theirs = rebound_errors(m[:a.rebound_systems], x[:a.rebound_systems], v[:a.rebound_systems], steps, h)
        t2 = time.time()
        rms = lambda e: np.sqrt(np.mean(e ** 2))
        print(f"{steps:8.0e} steps: swarmfit {rms(ours):.2e} ({t1 - t0:.1f} s)  REBOUND {rms(theirs):.2e} "
              f"({t2 - t1:.1f} s)", flush=True)
        steps *= 10


if __name__ == "__main__":
    main()
