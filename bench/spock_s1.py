#!/usr/bin/env python3
"""S1 against SPOCK (Tamayo et al. 2020, PyPI `spock`, FeatureClassifier): draws compact three-planet
systems exactly as bench/rebound_s1.py draws them (G = 1, star 1, P_inner = 2 pi; masses
log-uniform in [3e-6, 3e-5], period ratios uniform in [1.2, 1.6], e in [0, 0.05], inc in [0, 0.02],
angles uniform; REBOUND's sim.add(m=, P=, e=, inc=, Omega=, omega=, M=), i.e. Jacobi elements),
writes them to a CSV (one row per system, full-precision floats) for swarmfit to integrate, and
with --spock adds SPOCK's probability of stability (over 1e9 orbits of the innermost planet) and
the seconds of each predict_stable call (one call per system, n_jobs = 1, so one core).
SPOCK copies the simulation, rotates it to the invariable plane and sets its own WHFast step
(0.05 of the shortest pericentre passage), safe_mode and MEGNO, and is scale-free (its own tests
rescale lengths, times and masses), so G = 1 units and the settings here only follow
rebound_s1.py. `compare` joins that CSV with swarmfit's outcome CSV (columns system,survived;
optionally orbits = orbits of the outermost planet survived) on `system` and prints a Markdown
table: fraction stable by swarmfit, SPOCK's ROC AUC against it (Mann-Whitney, ties 1/2), the
confusion rates at p > 0.5, mean p per class, and, with `orbits`, the AUC against "survived at
least X orbits" for X in decades up to the horizon.

SPOCK 2.1.1 needs REBOUND < 5, scikit-learn < 1.6 and xgboost < 3; its package __init__ also
imports torch and celmech (for the other models), which FeatureClassifier does not need: when
`import spock` fails, this script loads spock.featureclassifier without the package __init__.
A venv that works (no torch, no CUDA wheels):

    python3 -m venv /work/venvs/spock
    /work/venvs/spock/bin/pip install "rebound>=4.0.1,<5" "scikit-learn<1.6" "xgboost-cpu>=2.1,<3" \\
        "numpy<3" pandas scipy
    /work/venvs/spock/bin/pip install --no-deps spock==2.1.1

    /work/venvs/spock/bin/python bench/spock_s1.py generate --systems 2000 --seed 20261126 --spock \\
        --out systems.csv
    python3 bench/spock_s1.py compare --systems systems.csv --outcomes outcomes.csv \\
        --horizon-label "1e6 outer orbits"

Without --spock, `generate` needs only numpy; `compare` needs only the standard library (and
cross-checks the AUC with scikit-learn where it imports).
"""
import argparse
import csv
import importlib
import importlib.util
import math
import os
import sys
import time
import types

ELEMENTS = ("m", "P", "e", "inc", "Omega", "omega", "M")
COLUMNS = ["system"] + ["%s%d" % (k, i) for i in (1, 2, 3) for k in ELEMENTS]


def draw(rng):
    """One system's Jacobi elements, drawn in the order of bench/rebound_s1.py's system(rng)."""
    planets = []
    period = 2 * math.pi
    for i in range(3):
        if i:
            period *= 1.2 + 0.4 * rng.uniform()
        m = 3e-6 * 10 ** rng.uniform()
        e = 0.05 * rng.uniform()
        inc = 0.02 * rng.uniform()
        Omega = 2 * math.pi * rng.uniform()
        omega = 2 * math.pi * rng.uniform()
        M = 2 * math.pi * rng.uniform()
        planets.append(dict(m=m, P=period, e=e, inc=inc, Omega=Omega, omega=omega, M=M))
    return planets


def simulation(planets):
    import rebound
    sim = rebound.Simulation()
    sim.G = 1.0
    sim.add(m=1.0)
    for p in planets:
        sim.add(**p)
    sim.move_to_com()
    sim.integrator = "whfast"
    sim.dt = planets[0]["P"] / 20
    return sim


def feature_classifier():
    """spock.FeatureClassifier; without the package __init__ (torch, celmech) if that fails."""
    try:
        from spock import FeatureClassifier
        return FeatureClassifier
    except ImportError as err:
        for name in [n for n in sys.modules if n == "spock" or n.startswith("spock.")]:
            del sys.modules[name]
        spec = importlib.util.find_spec("spock")
        if spec is None or spec.origin is None:
            raise
        pkg = types.ModuleType("spock")
        pkg.__path__ = [os.path.dirname(spec.origin)]
        sys.modules["spock"] = pkg
        module = importlib.import_module("spock.featureclassifier")
        pkg.FeatureClassifier = module.FeatureClassifier
        print("spock: `import spock` failed (%s); loaded spock.featureclassifier alone" % err, file=sys.stderr)
        return module.FeatureClassifier


def versions():
    out = []
    for name in ("spock", "rebound", "xgboost", "sklearn", "numpy"):
        try:
            from importlib.metadata import version
            dist = {"sklearn": "scikit-learn"}.get(name, name)
            try:
                out.append("%s %s" % (name, version(dist)))
            except Exception:
                out.append("%s %s" % (name, version(dist + "-cpu")))
        except Exception:
            pass
    return ", ".join(out)


def generate(args):
    import numpy as np
    rng = np.random.default_rng(args.seed)
    model = feature_classifier()() if args.spock else None
    columns = COLUMNS + (["spock_probability", "spock_seconds"] if args.spock else [])
    total = 0.0
    with open(args.out, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(columns)
        for s in range(args.systems):
            planets = draw(rng)
            row = [s] + [repr(float(p[k])) for p in planets for k in ELEMENTS]
            if model is not None:
                sim = simulation(planets)
                start = time.perf_counter()
                prob = float(model.predict_stable(sim, n_jobs=1))
                seconds = time.perf_counter() - start
                total += seconds
                row += [repr(prob), repr(seconds)]
                if (s + 1) % 100 == 0:
                    f.flush()
                    print("%d/%d systems, %.1f s of SPOCK" % (s + 1, args.systems, total), file=sys.stderr)
            out.writerow(row)
    print("wrote %d systems (seed %d) to %s" % (args.systems, args.seed, args.out))
    if model is not None:
        print("SPOCK FeatureClassifier (%s): %.2f s total, %.4f s per system (one predict_stable call "
              "each, n_jobs = 1)" % (versions(), total, total / max(args.systems, 1)))


def auc_mann_whitney(scores, labels):
    """P(score of a positive > score of a negative), ties counted 1/2 (average ranks)."""
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    ranks = [0.0] * len(scores)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1  # average of the 1-based ranks i+1 .. j+1
        i = j + 1
    pos = sum(1 for y in labels if y)
    neg = len(labels) - pos
    if pos == 0 or neg == 0:
        return float("nan")
    rank_sum = sum(r for r, y in zip(ranks, labels) if y)
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg)


def sklearn_auc(scores, labels):
    try:
        from sklearn.metrics import roc_auc_score
    except ImportError:
        return None
    if all(labels) or not any(labels):
        return float("nan")
    return float(roc_auc_score([int(y) for y in labels], scores))


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def fmt(x, digits=3):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else "%.*f" % (digits, x)


def compare(args):
    systems = {int(r["system"]): r for r in read_csv(args.systems)}
    if systems and "spock_probability" not in next(iter(systems.values())):
        sys.exit("%s has no spock_probability column: run `generate --spock`" % args.systems)
    outcomes = read_csv(args.outcomes)
    if not outcomes or "system" not in outcomes[0] or "survived" not in outcomes[0]:
        sys.exit("%s needs the columns system,survived" % args.outcomes)
    has_orbits = "orbits" in outcomes[0]
    prob, stable, orbits = [], [], []
    missing = 0
    for r in outcomes:
        s = int(r["system"])
        if s not in systems:
            missing += 1
            continue
        prob.append(float(systems[s]["spock_probability"]))
        stable.append(int(float(r["survived"])) == 1)
        if has_orbits:
            orbits.append(float(r["orbits"]))
    n = len(prob)
    if missing or n < len(systems):
        print("note: %d outcome rows not in %s; %d of its %d systems have no outcome"
              % (missing, args.systems, len(systems) - n, len(systems)), file=sys.stderr)
    if n == 0:
        sys.exit("no system in both files")

    auc = auc_mann_whitney(prob, stable)
    check = sklearn_auc(prob, stable)
    if check is not None and not (math.isnan(auc) and math.isnan(check)) and abs(auc - check) > 1e-9:
        sys.exit("AUC mismatch: Mann-Whitney %.12f, sklearn %.12f" % (auc, check))
    pred = [p > args.threshold for p in prob]
    tp = sum(1 for a, b in zip(pred, stable) if a and b)
    fp = sum(1 for a, b in zip(pred, stable) if a and not b)
    tn = sum(1 for a, b in zip(pred, stable) if not a and not b)
    fn = sum(1 for a, b in zip(pred, stable) if not a and b)
    pos, neg = tp + fn, fp + tn
    mean_pos = sum(p for p, y in zip(prob, stable) if y) / pos if pos else float("nan")
    mean_neg = sum(p for p, y in zip(prob, stable) if not y) / neg if neg else float("nan")

    label = " (%s)" % args.horizon_label if args.horizon_label else ""
    print("SPOCK FeatureClassifier vs swarmfit%s; positive class = stable, SPOCK stable if p > %g"
          % (label, args.threshold))
    print()
    print("| quantity | value |")
    print("| --- | --- |")
    print("| N systems | %d |" % n)
    print("| swarmfit stable (survived horizon) | %d (%s) |" % (pos, fmt(pos / n)))
    print("| SPOCK ROC AUC vs swarmfit | %s%s |"
          % (fmt(auc), "" if check is None else " (sklearn agrees)"))
    print("| accuracy at p > %g | %s |" % (args.threshold, fmt((tp + tn) / n)))
    print("| TPR (stable called stable) | %s |" % fmt(tp / pos if pos else float("nan")))
    print("| FPR (unstable called stable) | %s |" % fmt(fp / neg if neg else float("nan")))
    print("| mean SPOCK p, swarmfit-stable | %s |" % fmt(mean_pos))
    print("| mean SPOCK p, swarmfit-unstable | %s |" % fmt(mean_neg))
    secs = [float(r["spock_seconds"]) for r in systems.values() if r.get("spock_seconds")]
    if secs:
        print("| SPOCK s per system (generate) | %s |" % fmt(sum(secs) / len(secs), 4))

    if has_orbits:
        horizon = args.horizon_orbits or max(orbits)
        if args.orbit_thresholds:
            xs = sorted(args.orbit_thresholds)
        else:
            xs = [10.0 ** k for k in range(1, int(math.floor(math.log10(horizon) + 1e-9)) + 1)]
            if not xs or horizon > xs[-1] * (1 + 1e-9):
                xs.append(horizon)
        print()
        print("AUC against \"survived at least X orbits of the outermost planet\" (horizon %g):" % horizon)
        print()
        print("| X orbits | stable | fraction stable | SPOCK AUC | accuracy at p > %g |" % args.threshold)
        print("| --- | --- | --- | --- | --- |")
        for x in xs:
            ys = [y or o >= x * (1 - 1e-9) for y, o in zip(stable, orbits)]
            k = sum(ys)
            acc = sum(1 for a, b in zip(pred, ys) if a == b) / n
            print("| %g | %d | %s | %s | %s |" % (x, k, fmt(k / n), fmt(auc_mann_whitney(prob, ys)), fmt(acc)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="draw S1 systems to a CSV, optionally with SPOCK's probability")
    g.add_argument("--systems", type=int, default=2000)
    g.add_argument("--seed", type=int, default=20261126)
    g.add_argument("--out", default="systems.csv")
    g.add_argument("--spock", action="store_true", help="add spock_probability,spock_seconds columns")
    c = sub.add_parser("compare", help="SPOCK's probability against swarmfit's outcome, as Markdown")
    c.add_argument("--systems", required=True, help="CSV written by `generate --spock`")
    c.add_argument("--outcomes", required=True, help="swarmfit CSV with system,survived[,orbits,...]")
    c.add_argument("--horizon-label", default="", help="text for the table title, e.g. '1e6 outer orbits'")
    c.add_argument("--threshold", type=float, default=0.5)
    c.add_argument("--horizon-orbits", type=float, default=0.0,
                   help="swarmfit's horizon in outer orbits (default: the largest `orbits`)")
    c.add_argument("--orbit-thresholds", type=float, nargs="*",
                   help="X values for the orbits table (default: decades up to the horizon)")
    args = ap.parse_args()
    generate(args) if args.command == "generate" else compare(args)


if __name__ == "__main__":
    main()
