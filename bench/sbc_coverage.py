#!/usr/bin/env python3
"""Coverage of swarmfit's posterior intervals over repeated synthetic datasets.

A simulation-based-calibration style check (Talts et al. 2018, arXiv:1804.06788; here with one
fixed truth and flat priors, where calibrated 68% / 95% credible intervals cover the truth at
those rates over noise realisations): for each seed, `swarmfit simulate` makes RVs and transit
times of the two-planet truth of examples/demo/truth.cfg (new noise and RV times per seed),
`swarmfit fit` samples the posterior with the priors of examples/demo/fit.cfg (walkers start
around the truth; the run stops when every R-hat < 1.01 and bulk ESS >= --ess-target, and a
dataset whose fit does not converge counts as a failure), and the truth is compared with the
16-84% and 2.5-97.5% quantiles of every free parameter in the fit's summary CSV.

    python3 bench/sbc_coverage.py --datasets 40                  # the benchmark (bench/RESULTS.md)
    python3 bench/sbc_coverage.py --small                        # the CI version (ctest sbc_small)
Exit status 0 when the coverages are within --tolerance standard errors of 0.68 and 0.95, 1
otherwise. The intervals of one dataset are correlated (the planets' parameters share the same
noise), so the binomial standard error counts half as many independent intervals as there are.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEMO = os.path.join(ROOT, "examples", "demo")


def priors_section():
    text = open(os.path.join(DEMO, "fit.cfg")).read()
    return text[text.index("[priors]"):]


def read_truth(path):
    with open(path) as handle:
        rows = list(csv.reader(handle))
    return dict(zip(rows[0], map(float, rows[1])))


def fit_config(truth, data_dir, args):
    planets = ""
    for p in ("b", "c"):
        planets += f"[planet {p}]\n"
        for key in ("period", "mass", "secosw", "sesinw", "tc", "inc", "node"):
            planets += f"{key} = {truth[key + '_' + p]!r}\n"
        planets += "\n"
    return (f"star_mass = {truth['star_mass']!r}\nstar_radius = 1.0\nreference_epoch = 2460000.0\n"
            f"walkers = {args.walkers}\ngenerations = {args.generations}\noptimize = 0\nseed = {args.seed}\n"
            f"ess_target = {args.ess_target}\nrhat_target = 1.01\ncheck_every = 100\nprogress = off\n"
            f"predictive_draws = 0\nthreads = {args.threads}\n\n"
            + planets
            + f"[instrument SIM]\noffset = {truth['offset_SIM']!r}\njitter = {truth['jitter_SIM']!r}\n\n"
            f"[rv SIM]\nfile = {data_dir}/rv.txt\ncolumns = time rv rv_error\n\n"
            f"[transits b]\nfile = {data_dir}/transits_b.txt\ncolumns = epoch time error\nplanet = b\n\n"
            f"[transits c]\nfile = {data_dir}/transits_c.txt\ncolumns = epoch time error\nplanet = c\n\n"
            + priors_section())


def simulate_arguments(args, seed, data_dir):
    # The demo's observing plan (examples/demo/truth.cfg), optionally shorter.
    return [args.binary, "simulate", "--config", os.path.join(DEMO, "truth.cfg"), "--output", data_dir,
            "--span", str(args.span), "--rv-count", str(args.rv_count), "--rv-error", "2.5", "--rv-jitter", "1.5",
            "--rv-offset", "-12.3", "--instrument", "SIM", "--transit-error", "1.5", "--seed", str(seed)]


def one_dataset(args, seed, work):
    data_dir = os.path.join(work, f"data{seed}")
    subprocess.run(simulate_arguments(args, seed, data_dir), check=True, capture_output=True, text=True)
    truth = read_truth(os.path.join(data_dir, "truth.csv"))
    config = os.path.join(work, f"fit{seed}.cfg")
    with open(config, "w") as handle:
        handle.write(fit_config(truth, data_dir, args))
    output = os.path.join(work, f"fit{seed}.h5")
    started = time.time()
    run = subprocess.run([args.binary, "fit", "--config", config, f"output={output}", "overwrite=true"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"fit of seed {seed} failed: {run.stderr.strip()}")
    seconds = time.time() - started
    converged = ", converged" in run.stdout
    result = {"seed": seed, "seconds": seconds, "converged": converged, "parameters": {}}
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
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "apps", "swarmfit"))
    parser.add_argument("--datasets", type=int, default=40)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--span", type=float, default=900.0)
    parser.add_argument("--rv-count", type=int, default=50)
    parser.add_argument("--walkers", type=int, default=32)
    parser.add_argument("--generations", type=int, default=20000)
    parser.add_argument("--ess-target", type=float, default=400)
    parser.add_argument("--seed", type=int, default=1, help="sampler seed")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--tolerance", type=float, default=3.0, help="allowed deviation, standard errors")
    parser.add_argument("--small", action="store_true", help="CI size: 8 datasets over 400 days, ESS 150")
    parser.add_argument("--output", default="")
    args = parser.parse_args()
    if args.small:
        args.datasets, args.span, args.rv_count, args.ess_target, args.generations = 8, 400.0, 30, 150, 8000
    if not os.path.exists(args.binary):
        print(f"sbc_coverage: no swarmfit binary at {args.binary}")
        return 1
    started = time.time()
    results = []
    with tempfile.TemporaryDirectory(prefix="swarmfit_sbc_") as work:
        for k in range(args.datasets):
            results.append(one_dataset(args, args.first_seed + k, work))
            r = results[-1]
            n68 = sum(p["in68"] for p in r["parameters"].values())
            n95 = sum(p["in95"] for p in r["parameters"].values())
            print(f"  seed {r['seed']}: {r['seconds']:.1f} s, converged {r['converged']}, "
                  f"{n68}/{len(r['parameters'])} in 68%, {n95} in 95%", flush=True)
    intervals = [p for r in results for p in r["parameters"].values()]
    failures = []
    summary = {"datasets": len(results), "intervals": len(intervals),
               "converged": sum(r["converged"] for r in results), "seconds": time.time() - started,
               "command": " ".join(sys.argv)}
    for level, key in ((0.68, "in68"), (0.95, "in95")):
        coverage = sum(p[key] for p in intervals) / len(intervals)
        error = math.sqrt(level * (1 - level) / (0.5 * len(intervals)))
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
    for line in failures:
        print("FAIL:", line)
    if args.output:
        with open(args.output, "w") as handle:
            json.dump({"summary": summary, "datasets": results}, handle, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
