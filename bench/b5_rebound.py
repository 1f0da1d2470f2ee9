#!/usr/bin/env python3
"""Benchmark B5: swarmfit MVS against REBOUND WHFast on one CPU core.

Systems (Swarm-NG test ensemble): G = 1, a star of mass 1 at rest at the
origin, n-1 planets of mass 1e-3 on circular coplanar orbits at
a_i = 1.4**(i-1), speed sqrt(G (1 + 1e-3) / a_i), random phases.
For each (n, dt) in {3, 6} x {1e-2, 1e-3} the same M systems are integrated
to T = 10 by

  * REBOUND WHFast, democratic heliocentric, safe_mode = 0: one Simulation per
    system, timed with perf_counter around integrate(10, exact_finish_time=0)
    + synchronize() only (setup excluded), summed over the systems;
  * swarmfit integrate integrator=mvs mvs_splitting=kepler_jump_kick
    threads=1, timed by its own "wall time" line (integration only).

Each side runs 3 times; the median is reported as ns per system-step, with
the ratio REBOUND / swarmfit (> 1: swarmfit is faster) and the median
relative energy error |dE/E| of each code.

Run from the repository root:
    python3 bench/b5_rebound.py [--systems 256] [--build build] [--seed 1]
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import tempfile
import time

import numpy as np
import rebound

T_END = 10.0
PLANET_MASS = 1e-3


def make_systems(nsys, nbod, rng):
    """Rows (system, body, mass, x, y, z, vx, vy, vz) of the Swarm-NG ensemble."""
    rows = []
    for s in range(nsys):
        rows.append((s, 0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
        for i in range(1, nbod):
            a = 1.4 ** (i - 1)
            v = np.sqrt((1.0 + PLANET_MASS) / a)
            phi = rng.uniform(0.0, 2.0 * np.pi)
            c, s_ = np.cos(phi), np.sin(phi)
            rows.append((s, i, PLANET_MASS, a * c, a * s_, 0.0, -v * s_, v * c, 0.0))
    return rows


def write_csv(rows, path):
    with open(path, "w") as f:
        f.write("system,body,mass,x,y,z,vx,vy,vz\n")
        for r in rows:
            f.write("%d,%d," % r[:2] + ",".join(repr(float(x)) for x in r[2:]) + "\n")


def run_rebound(rows, nsys, nbod, dt):
    """One pass over the systems: (seconds, system-steps, median |dE/E|)."""
    seconds, steps, errors = 0.0, 0, []
    for s in range(nsys):
        sim = rebound.Simulation()
        sim.G = 1.0
        sim.integrator = "whfast"
        sim.integrator.coordinates = "democraticheliocentric"
        sim.integrator.safe_mode = 0
        for (_, _, m, x, y, z, vx, vy, vz) in rows[s * nbod:(s + 1) * nbod]:
            sim.add(m=m, x=x, y=y, z=z, vx=vx, vy=vy, vz=vz)
        sim.dt = dt
        e0 = sim.energy()
        t0 = time.perf_counter()
        sim.integrate(T_END, exact_finish_time=0)
        sim.synchronize()
        seconds += time.perf_counter() - t0
        steps += getattr(sim, "steps_done", None) or round(T_END / dt)
        errors.append(abs((sim.energy() - e0) / e0))
    return seconds, steps, statistics.median_high(errors)  # swarmfit's median: upper middle


NUM = r"([-+0-9.eE]+|inf|nan)"


def run_swarmfit(exe, csv, dt):
    """One run of ours: (seconds, system-steps, median |dE/E|) from its summary."""
    cmd = [exe, "integrate", "initial_conditions=" + csv, "integrator=mvs",
           "mvs_splitting=kepler_jump_kick", "time_step=%r" % dt,
           "destination_time=%r" % T_END, "threads=1"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout

    def field(pattern):
        m = re.search(pattern, out, re.MULTILINE)
        if not m:
            raise RuntimeError("cannot parse %r in swarmfit output:\n%s" % (pattern, out))
        return float(m.group(1))

    return (field(r"^\s*wall time\s+" + NUM + r"\s*s"),
            field(r"^\s*steps\s+" + NUM + r"\s+system-steps"),
            field(r"^\s*\|dE/E\|\s+worst\s+\S+,\s*median\s+" + NUM))


def median_of(runs):
    """Median time per system-step (ns) over repetitions, and median |dE/E|."""
    return (statistics.median(1e9 * sec / steps for sec, steps, _ in runs),
            statistics.median(err for _, _, err in runs))


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", type=int, default=256, help="systems per case (default 256)")
    ap.add_argument("--build", default="build", help="build directory (default build)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the orbital phases")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions per side (median)")
    args = ap.parse_args()
    exe = os.path.join(args.build, "apps", "swarmfit")
    if not os.access(exe, os.X_OK):
        raise SystemExit("no swarmfit executable at %s (use --build)" % exe)

    print("B5: MVS vs REBOUND WHFast (DH, safe_mode=0), one core, T = %g" % T_END)
    print("machine: %s; %d cores; python %s; rebound %s; numpy %s"
          % (cpu_model(), os.cpu_count(), platform.python_version(), rebound.__version__, np.__version__))
    head = "%3s %7s %8s %15s %15s %8s %12s %12s" % (
        "n", "dt", "systems", "REBOUND ns/st", "swarmfit ns/st", "ratio", "REB |dE/E|", "ours |dE/E|")
    print(head)
    print("-" * len(head))
    with tempfile.TemporaryDirectory() as tmp:
        for nbod in (3, 6):
            for dt in (1e-2, 1e-3):
                rows = make_systems(args.systems, nbod, np.random.default_rng(args.seed))
                csv = os.path.join(tmp, "b5_n%d.csv" % nbod)
                write_csv(rows, csv)
                reb_ns, reb_err = median_of([run_rebound(rows, args.systems, nbod, dt)
                                             for _ in range(args.repeat)])
                our_ns, our_err = median_of([run_swarmfit(exe, csv, dt) for _ in range(args.repeat)])
                print("%3d %7g %8d %15.1f %15.1f %8.2f %12.2e %12.2e" % (
                    nbod, dt, args.systems, reb_ns, our_ns, reb_ns / our_ns, reb_err, our_err), flush=True)
    print("ratio = REBOUND time / swarmfit time per system-step (> 1: swarmfit faster)")


if __name__ == "__main__":
    main()
