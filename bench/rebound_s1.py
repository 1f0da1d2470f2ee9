#!/usr/bin/env python3
"""S1 peer timing (design/BENCHMARKS.md): REBOUND WHFast (Jacobi, safe_mode = 1, as MEGNO needs)
with MEGNO on, on compact three-planet systems drawn as `swarmfit bench --only S1` draws them
(G = 1, star 1; masses log-uniform in [3e-6, 3e-5], period ratios uniform in [1.2, 1.6],
e in [0, 0.05], inc in [0, 0.02], angles uniform; Jacobi elements), at P_inner / 20, for
--orbits orbits of the outer planet, stopping at a close encounter within 1 mutual Hill radius
(REBOUND's exit_min_distance on the pair distance, as SPOCK) or beyond 100. One core: prints
seconds per system-step and per system, and the fraction that survived, to compare with
swarmfit's row as a ratio on the same machine.

    python3 bench/rebound_s1.py --systems 20 --orbits 1e3
"""
import argparse
import math
import time

import numpy as np
import rebound


def system(rng):
    sim = rebound.Simulation()
    sim.G = 1.0
    sim.add(m=1.0)
    period = 2 * math.pi
    for i in range(3):
        if i:
            period *= 1.2 + 0.4 * rng.uniform()
        sim.add(m=3e-6 * 10 ** rng.uniform(), P=period, e=0.05 * rng.uniform(), inc=0.02 * rng.uniform(),
                Omega=2 * math.pi * rng.uniform(), omega=2 * math.pi * rng.uniform(), M=2 * math.pi * rng.uniform())
    sim.move_to_com()
    sim.integrator = "whfast"
    sim.integrator.coordinates = "jacobi"
    sim.integrator.safe_mode = 1
    sim.dt = 2 * math.pi / 20
    sim.exit_max_distance = 100.0
    sim.init_megno()
    return sim, period


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--systems", type=int, default=20)
    ap.add_argument("--orbits", type=float, default=1e3)
    args = ap.parse_args()
    rng = np.random.default_rng(20261126)
    steps = 0
    survived = 0
    start = time.perf_counter()
    for _ in range(args.systems):
        sim, outer = system(rng)
        ps = sim.particles
        rh = [((ps[i].m + ps[i + 1].m) / 3) ** (1 / 3) for i in (1, 2)]
        t_end = args.orbits * outer
        ok = True
        try:
            chunk = 50 * outer
            while sim.t < t_end and ok:
                sim.integrate(min(sim.t + chunk, t_end), exact_finish_time=0)
                for i, r in zip((1, 2), rh):
                    a, b, c = ps[i].xyz, ps[i + 1].xyz, ps[0].xyz
                    d = math.dist(a, b)
                    rbar = math.sqrt(0.5 * (math.dist(a, c) ** 2 + math.dist(b, c) ** 2))
                    ok = ok and d > r * rbar
        except rebound.Escape:
            ok = False
        steps += sim.steps_done
        survived += ok
    wall = time.perf_counter() - start
    print("REBOUND %s WHFast+MEGNO: %d systems, %.0f orbits: %.3f s, %.3g s per system-step, %.3g system-steps/s, "
          "survived %.2f" % (rebound.__version__, args.systems, args.orbits, wall, wall / steps, steps / wall,
                             survived / args.systems))


if __name__ == "__main__":
    main()
