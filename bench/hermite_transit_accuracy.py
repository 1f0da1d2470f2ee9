#!/usr/bin/env python3
"""How well a two-point Hermite interpolant of a Kepler orbit gives a transit time (bench/RESULTS.md,
runs 18 and 19: a design study for cheaper GPU observers, not used by the code).

A transit is the zero of the sky coordinate of an edge-on orbit. The orbit's state is known at two
times a step h = P/20 apart around the transit (as at two kicks of a mixed-variable symplectic
step); the quintic interpolant matches position, velocity and acceleration at both ends, the septic
one the jerk as well. Prints the worst transit-time error over 12 arguments of pericentre and 7
positions of the transit inside the step, for eccentricities 0 to 0.5, as a fraction of P and in
seconds for Kepler-9 b (P = 19.24 d). Then the same for a velocity (the star's RV): the septic
that matches velocity, acceleration, jerk and snap at both ends, worst error over the orbit as a
fraction of the velocity amplitude (run 19). numpy and scipy.
    python3 bench/hermite_transit_accuracy.py
"""
from math import factorial

import numpy as np
from scipy.optimize import brentq

MU, A = 1.0, 1.0
P = 2 * np.pi  # G = M = a = 1


def state(t, e, w):
    """Position, velocity, acceleration (x-y plane; sky coordinate x, observer along +y)."""
    n = 2 * np.pi / P
    m = n * t
    ea = m
    for _ in range(60):
        ea -= (ea - e * np.sin(ea) - m) / (1 - e * np.cos(ea))
    r = A * (1 - e * np.cos(ea))
    xo, yo = A * (np.cos(ea) - e), A * np.sqrt(1 - e * e) * np.sin(ea)
    vxo = -A * n * np.sin(ea) / (1 - e * np.cos(ea))
    vyo = A * n * np.sqrt(1 - e * e) * np.cos(ea) / (1 - e * np.cos(ea))
    c, s = np.cos(w), np.sin(w)
    x = np.array([c * xo - s * yo, s * xo + c * yo])
    v = np.array([c * vxo - s * vyo, s * vxo + c * vyo])
    return x, v, -MU * x / r**3


def jerk(x, v):
    r = np.linalg.norm(x)
    return -MU * (v / r**3 - 3 * np.dot(x, v) * x / r**5)


def snap(x, v):
    r2 = x @ x
    u, sigma, w = MU / r2**1.5, (x @ v) / r2, (v @ v) / r2
    return u * (3 * w - 2 * u - 15 * sigma**2) * x + 6 * u * sigma * v


def hermite(h, f0, f1):
    """Coefficients in s = t - t0 of the polynomial with derivatives f0 at 0 and f1 at h."""
    k = len(f0)
    rows, rhs = [], []
    for tt, ff in ((0.0, f0), (h, f1)):
        for d in range(k):
            rows.append([factorial(p) / factorial(p - d) * tt ** (p - d) if p >= d else 0.0 for p in range(2 * k)])
            rhs.append(ff[d])
    return np.linalg.solve(np.array(rows), np.array(rhs))


def main():
    h = P / 20
    for e in (0.0, 0.1, 0.3, 0.5):
        worst = {3: 0.0, 4: 0.0}
        for w in np.linspace(0, 2 * np.pi, 13)[:-1]:
            sky = lambda t: state(t, e, w)[0][0]
            ts = np.linspace(-0.5 * P, 1.5 * P, 4001)
            vals = [sky(t) for t in ts]
            transit = next(brentq(sky, ts[i], ts[i + 1], xtol=1e-15) for i in range(len(ts) - 1)
                           if vals[i] * vals[i + 1] <= 0 and state(ts[i], e, w)[0][1] > 0)
            for inside in np.linspace(0.05, 0.95, 7):
                t0 = transit - inside * h
                x0, v0, a0 = state(t0, e, w)
                x1, v1, a1 = state(t0 + h, e, w)
                ends = ([x0[0], v0[0], a0[0], jerk(x0, v0)[0]], [x1[0], v1[0], a1[0], jerk(x1, v1)[0]])
                for k in worst:
                    poly = np.polynomial.Polynomial(hermite(h, ends[0][:k], ends[1][:k]))
                    worst[k] = max(worst[k], abs(t0 + brentq(poly, 0, h, xtol=1e-15) - transit))
        day = 19.24 * 86400 / P
        print(f"e = {e}: worst error / P: quintic {worst[3] / P:.2e}, septic {worst[4] / P:.2e}; "
              f"Kepler-9 b: quintic {worst[3] * day:.3g} s, septic {worst[4] * day:.3g} s")


def velocity_errors():
    h = P / 20
    for e in (0.0, 0.1, 0.3):
        worst = 0.0
        for t0 in np.linspace(0, P, 200):
            x0, v0, a0 = state(t0, e, 1.1)
            x1, v1, a1 = state(t0 + h, e, 1.1)
            ends = ([v0[1], a0[1], jerk(x0, v0)[1], snap(x0, v0)[1]], [v1[1], a1[1], jerk(x1, v1)[1], snap(x1, v1)[1]])
            poly = np.polynomial.Polynomial(hermite(h, ends[0], ends[1]))
            for s in np.linspace(0, 1, 21):
                worst = max(worst, abs(poly(s * h) - state(t0 + s * h, e, 1.1)[1][1]))
        print(f"e = {e}: septic velocity interpolant, worst error / velocity amplitude {worst:.2e}")


if __name__ == "__main__":
    main()
    velocity_errors()
