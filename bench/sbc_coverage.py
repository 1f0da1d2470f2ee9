#!/usr/bin/env python3
"""Simulation-based calibration of swarmfit's posteriors (Talts et al. 2018, arXiv:1804.06788;
Cook, Gelman & Rubin 2006): truths drawn from the prior, data simulated from each truth, each
dataset fitted with that same prior; then the truth is a draw from its own posterior, so for a
correct likelihood and sampler every central credible interval covers the truth at its nominal
rate, whatever the posterior's shape (no Gaussian or large-data approximation involved).

For each dataset k: a truth is drawn (Python's random.Random(first_seed + k)) from the prior
below, a two-planet system like the demo's (examples/demo/truth.cfg: near 2:1, edge-on, both
transiting) with an RV offset and jitter; `swarmfit simulate` makes its RVs and transit times
(the demo's observing plan, optionally shorter, noise seeded by k); `swarmfit fit` samples the
posterior under the same prior (walkers start around the truth, itself a posterior draw; the first
half is burn-in; the run stops when every R-hat < --rhat-target (1.01) and bulk ESS >=
--ess-target, and a fit that does not converge counts as a failure); the truth is compared with
the 16-84% and 2.5-97.5% quantiles of every free parameter in the fit's summary CSV.

    python3 bench/sbc_coverage.py --jobs 16 --rhat-target 1.05 --ess-target 200   # bench/RESULTS.md
    python3 bench/sbc_coverage.py --small                    # the CI version (ctest sbc_small)
    python3 bench/sbc_coverage.py --combine a.json.jsonl b.json.jsonl --seeds 1000,1001,...  # runs in parts
    python3 bench/sbc_coverage.py --small --fits-only --seeds 1000,...,1007 --output a  # a part: a.jsonl
Exit status 0 when the coverages are within --tolerance standard errors of 0.68 and 0.95 and
every fit converged, 1 otherwise. The intervals of one dataset are correlated (the planets'
parameters share the same noise), so the standard error is the larger of the binomial one with
half as many independent intervals and the datasets' spread.
Needs only the Python standard library (it runs where numpy is absent).
"""
import argparse
import concurrent.futures
import csv
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The prior of the calibration: what the truths are drawn from and what every fit assumes.
# (name, kind, a, b): uniform(a, b) or log_uniform(a, b). Fixed: star mass 1, inc 89.5 / 89.7 deg
# (both planets transit), nodes 0.
PRIOR = [
    ("period_b", "uniform", 9.75, 9.85),
    ("mass_b", "uniform", 10.0, 40.0),
    ("secosw_b", "uniform", -0.3, 0.3),
    ("sesinw_b", "uniform", -0.3, 0.3),
    ("tc_b", "uniform", 2460003.6, 2460003.8),
    ("period_c", "uniform", 19.85, 19.95),
    ("mass_c", "uniform", 20.0, 60.0),
    ("secosw_c", "uniform", -0.3, 0.3),
    ("sesinw_c", "uniform", -0.3, 0.3),
    ("tc_c", "uniform", 2460011.1, 2460011.3),
    ("offset_SIM", "uniform", -20.0, 20.0),
    ("jitter_SIM", "log_uniform", 0.5, 5.0),
]
FIXED = {"inc_b": 89.5, "inc_c": 89.7, "node_b": 0.0, "node_c": 0.0}


# --basis ecosw: the eccentricity vector as e (cos w, sin w) (eccentricity_parameter = ecosw), its
# prior uniform in a square of the same e range in the corners (|e cos w|, |e sin w| <= 0.09 ~ 0.3^2).
ECCENTRICITY_KEYS = ["secosw", "sesinw"]


def set_plain_basis():
    ECCENTRICITY_KEYS[:] = ["ecosw", "esinw"]
    PRIOR[:] = [((name.replace("secosw", "ecosw").replace("sesinw", "esinw"), kind, -0.09, 0.09)
                 if name.startswith(("secosw", "sesinw")) else (name, kind, a, b)) for name, kind, a, b in PRIOR]


# The CI version (--small) also fixes the orbits circular: 8 free parameters, a posterior that
# converges in seconds, and still two interacting planets' RVs and transit times.
def set_small():
    circular = {f"{key}_{p}": 0.0 for key in ECCENTRICITY_KEYS for p in ("b", "c")}
    PRIOR[:] = [entry for entry in PRIOR if entry[0] not in circular]
    FIXED.update(circular)


def draw_truth(seed):
    rng = random.Random(seed)
    truth = {}
    for name, kind, a, b in PRIOR:
        truth[name] = rng.uniform(a, b) if kind == "uniform" else math.exp(rng.uniform(math.log(a), math.log(b)))
    truth.update(FIXED)
    return truth


def model_text(truth):
    text = "star_mass = 1.0\nstar_radius = 1.0\nreference_epoch = 2460000.0\n"
    text += f"eccentricity_parameter = {ECCENTRICITY_KEYS[0]}\n\n"
    for p in ("b", "c"):
        text += f"[planet {p}]\n"
        for key in ("period", "mass", *ECCENTRICITY_KEYS, "tc", "inc", "node"):
            text += f"{key} = {truth[key + '_' + p]!r}\n"
        text += "\n"
    return text


def fit_config(truth, data_dir, args, seed):
    priors = "[priors]\nstar_mass = fixed\n" + "".join(f"{k} = fixed\n" for k in FIXED)
    priors += "".join(f"{name} = {kind}({a!r}, {b!r})\n" for name, kind, a, b in PRIOR)
    return (f"walkers = {args.walkers}\ngenerations = {args.generations}\noptimize = 0\nseed = {seed}\n"
            f"ess_target = {args.ess_target}\nrhat_target = {args.rhat_target}\ncheck_every = {args.check_every}\n"
            f"progress = off\npredictive_draws = 0\nthreads = {args.threads}\nthin = {args.thin}\n"
            + "".join(f"{setting}\n" for setting in args.fit_args.split())
            + model_text(truth)
            + f"[instrument SIM]\noffset = {truth['offset_SIM']!r}\njitter = {truth['jitter_SIM']!r}\n\n"
            f"[rv SIM]\nfile = {data_dir}/rv.txt\ncolumns = time rv rv_error\n\n"
            f"[transits b]\nfile = {data_dir}/transits_b.txt\ncolumns = epoch time error\nplanet = b\n\n"
            f"[transits c]\nfile = {data_dir}/transits_c.txt\ncolumns = epoch time error\nplanet = c\n\n"
            + priors)


def one_dataset(args, seed, work):
    truth = draw_truth(seed)
    truth_config = os.path.join(work, f"truth{seed}.cfg")
    with open(truth_config, "w") as handle:
        handle.write(model_text(truth))
    data_dir = os.path.join(work, f"data{seed}")
    subprocess.run([args.binary, "simulate", "--config", truth_config, "--output", data_dir,
                    "--span", str(args.span), "--rv-count", str(args.rv_count), "--rv-error", "2.5",
                    "--rv-jitter", repr(truth["jitter_SIM"]), "--rv-offset", repr(truth["offset_SIM"]),
                    "--instrument", "SIM", "--transit-error", "1.5", "--seed", str(seed)],
                   check=True, capture_output=True, text=True)
    config = os.path.join(work, f"fit{seed}.cfg")
    with open(config, "w") as handle:
        handle.write(fit_config(truth, data_dir, args, seed))
    output = os.path.join(work, f"fit{seed}.h5")
    started = time.time()
    run = subprocess.run([args.binary, "fit", "--config", config, f"output={output}", "overwrite=true"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"fit of seed {seed} failed: {run.stderr.strip()}")
    seconds = time.time() - started
    converged = ", converged" in run.stdout
    result = {"seed": seed, "seconds": seconds, "converged": converged,
              "settings": {"walkers": args.walkers, "generations": args.generations, "thin": args.thin,
                           "basis": args.basis, "fit_args": args.fit_args, "rhat_target": args.rhat_target,
                           "ess_target": args.ess_target},
              "parameters": {}}
    with open(os.path.join(work, f"fit{seed}_summary.csv")) as handle:
        for row in csv.DictReader(handle):
            if row["derived"] == "1":
                continue
            x = truth[row["parameter"]]
            result["parameters"][row["parameter"]] = {
                "truth": x, "median": float(row["median"]),
                "in68": float(row["lower_16"]) <= x <= float(row["upper_84"]),
                "in95": float(row["lower_2.5"]) <= x <= float(row["upper_97.5"]),
                "rhat": float(row["rhat"]), "ess_bulk": float(row["ess_bulk"])}
    os.remove(output)  # the chains are not needed; keep the work folder small
    return result


def summarise(results, args, started, command):
    """Prints the coverages of the datasets' results; returns the failure lines."""
    intervals = [p for r in results for p in r["parameters"].values()]
    failures = []
    summary = {"datasets": len(results), "intervals": len(intervals),
               "converged": sum(r["converged"] for r in results), "seconds": time.time() - started,
               "command": command}
    for level, key in ((0.68, "in68"), (0.95, "in95")):
        coverage = sum(p[key] for p in intervals) / len(intervals)
        # Standard error: the larger of the binomial one with half as many independent intervals
        # and the spread of the datasets' own coverages over sqrt(datasets) (one dataset's
        # intervals move together: a noise realisation shifts correlated parameters as one).
        error = math.sqrt(level * (1 - level) / (0.5 * len(intervals)))
        per_dataset = [sum(p[key] for p in r["parameters"].values()) / len(r["parameters"]) for r in results]
        if len(per_dataset) > 1:
            m = sum(per_dataset) / len(per_dataset)
            spread = math.sqrt(sum((x - m) ** 2 for x in per_dataset) / (len(per_dataset) - 1))
            error = max(error, spread / math.sqrt(len(per_dataset)))
        summary[f"coverage_{key[2:]}"] = coverage
        summary[f"standard_error_{key[2:]}"] = error
        if abs(coverage - level) > args.tolerance * error:
            failures.append(f"{level:.0%} intervals cover the truth in {coverage:.3f} of cases "
                            f"(expected {level} +- {args.tolerance} x {error:.3f})")
    if summary["converged"] < len(results):
        failures.append(f"{len(results) - summary['converged']} of {len(results)} fits did not converge")
    per_parameter = {}
    for name in results[0]["parameters"]:
        per_parameter[name] = {key: sum(r["parameters"][name][key] for r in results) / len(results)
                               for key in ("in68", "in95")}
    summary["per_parameter"] = per_parameter
    print(json.dumps({k: v for k, v in summary.items() if k != "per_parameter"}, indent=1))
    for name, c in per_parameter.items():
        print(f"  {name:12s} 68%: {c['in68']:.2f}  95%: {c['in95']:.2f}")
    if args.output:
        with open(args.output, "w") as handle:
            json.dump({"summary": summary, "datasets": results}, handle, indent=1)
    return failures


def combine(args):
    """--combine: the results of earlier runs' .jsonl files, one per dataset seed. A dataset fitted
    more than once (a run cut short, or refitted with more generations or walkers) counts with its
    first converged fit; every seed of --seeds must have one, or the benchmark fails."""
    records = {}
    for path in args.combine:
        with open(path) as handle:
            for line in handle:
                if line.strip():
                    r = json.loads(line)
                    kept = records.get(r["seed"])
                    if kept is None or (r["converged"] and not kept["converged"]):
                        records[r["seed"]] = r
    seeds = [int(v) for v in args.seeds.split(",")] if args.seeds else sorted(records)
    missing = [s for s in seeds if s not in records]
    results = [records[s] for s in seeds if s in records]
    if not results:
        print(f"sbc_coverage: no dataset results in {' '.join(args.combine)}")
        return 1
    for r in results:
        how = r.get("settings", {})
        how = f" ({how.get('walkers')} walkers, {how.get('fit_args') or 'DE moves'}, {how.get('machine', '')})" if how else ""
        print(f"  seed {r['seed']}: {r['seconds']:.1f} s, converged {r['converged']}{how}", flush=True)
    failures = summarise(results, args, time.time(), "combine " + " ".join(args.combine))
    if missing:
        failures.append(f"no result for seeds {','.join(map(str, missing))}")
    for line in failures:
        print("FAIL:", line)
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "apps", "swarmfit"))
    parser.add_argument("--datasets", type=int, default=64)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--seeds", default="", help="comma-separated dataset seeds (instead of --first-seed, --datasets)")
    parser.add_argument("--span", type=float, default=900.0)
    parser.add_argument("--rv-count", type=int, default=50)
    parser.add_argument("--walkers", type=int, default=32)
    parser.add_argument("--generations", type=int, default=40000)
    parser.add_argument("--ess-target", type=float, default=400)
    parser.add_argument("--rhat-target", type=float, default=1.01)
    parser.add_argument("--check-every", type=int, default=500)
    parser.add_argument("--threads", type=int, default=1, help="threads per fit")
    parser.add_argument("--thin", type=int, default=1,
                        help="keep every k-th generation (use 20-50 with thousands of walkers: the chain is in memory)")
    parser.add_argument("--jobs", type=int, default=1, help="fits run at once")
    parser.add_argument("--tolerance", type=float, default=3.0, help="allowed deviation, standard errors")
    parser.add_argument("--fit-args", default="",
                        help="more fit settings, space-separated key=value (e.g. 'kde=0.5 kde_components=512')")
    parser.add_argument("--basis", choices=("secosw", "ecosw"), default="secosw",
                        help="eccentricity parameters of truths and fits (ecosw: e cos w, e sin w)")
    parser.add_argument("--small", action="store_true",
                        help="CI size: circular orbits, 16 datasets, 24 walkers, ESS 200")
    parser.add_argument("--output", default="")
    parser.add_argument("--fits-only", action="store_true",
                        help="fit and record the datasets in OUTPUT.jsonl (started afresh), judge nothing: "
                             "--combine judges the parts together (ctest runs the CI version in two parts at once)")
    parser.add_argument("--combine", nargs="+", default=[], metavar="JSONL",
                        help="no fits: the coverage of earlier runs' OUTPUT.jsonl files (with --seeds: exactly those datasets)")
    args = parser.parse_args()
    if args.combine:
        return combine(args)
    if args.basis == "ecosw":
        set_plain_basis()
    if args.small:
        set_small()
        args.datasets, args.walkers, args.ess_target, args.generations, args.check_every = 16, 24, 200, 20000, 250
    if not os.path.exists(args.binary):
        print(f"sbc_coverage: no swarmfit binary at {args.binary}")
        return 1
    if args.fits_only:
        if not args.output:
            print("sbc_coverage: --fits-only needs --output")
            return 1
        if os.path.exists(args.output + ".jsonl"):
            os.remove(args.output + ".jsonl")  # a part's record is its own run's, never an older one's
    started = time.time()
    results = []
    with tempfile.TemporaryDirectory(prefix="swarmfit_sbc_") as work:
        seeds = ([int(v) for v in args.seeds.split(",")] if args.seeds else
                 [args.first_seed + k for k in range(args.datasets)])
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(one_dataset, args, s, work) for s in seeds]
            for future in concurrent.futures.as_completed(futures):
                r = future.result()
                results.append(r)
                if args.output:  # as they come, so a run cut short still leaves its datasets
                    with open(args.output + ".jsonl", "a") as handle:
                        handle.write(json.dumps(r) + "\n")
                n68 = sum(p["in68"] for p in r["parameters"].values())
                n95 = sum(p["in95"] for p in r["parameters"].values())
                print(f"  seed {r['seed']}: {r['seconds']:.1f} s, converged {r['converged']}, "
                      f"{n68}/{len(r['parameters'])} in 68%, {n95} in 95%", flush=True)
    if args.fits_only:
        return 0
    failures = summarise(results, args, started, " ".join(sys.argv))
    for line in failures:
        print("FAIL:", line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
