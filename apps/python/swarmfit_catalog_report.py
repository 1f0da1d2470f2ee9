#!/usr/bin/env python3
"""The browser report of a `swarmfit catalog` run; the program the command runs at its end.

Usage:
    python3 apps/python/swarmfit_catalog_report.py OUTPUT [--jobs N]

Reads OUTPUT/summary.csv and every fitted target's run file (OUTPUT/targets/NAME/run.h5), draws
each target's RV plot (and O-C plots where it has transit times) with swarmfit plot's functions
into OUTPUT/report/NAME/, and writes OUTPUT/report/index.html: one sortable table, a row per
target and planet (status, the fitted P, K, m sin i, e with their 16/84% intervals, the planet
table's P and K, R-hat, ESS, time), each target's plots under the table. Once every image has
loaded, the page marks itself (body data-images-loaded and data-images-broken) for a headless
browser check. Plots that exist and are newer than the run file are kept (a resumed catalog
redraws only what changed). Prints the page's path.
"""
import argparse
import csv
import html
import math
import os
import sys
from concurrent.futures import ProcessPoolExecutor

import h5py

import swarmfit_plot

COLUMNS = [  # (header, summary.csv column(s)); a triple is a median with its 16 and 84% quantiles
    ("target", "target"), ("planet", "planet"), ("status", "status"), ("RVs", "points"),
    ("P (d)", ("period_d", "period_d_16", "period_d_84")), ("table P", "table_period_d"),
    ("K (m/s)", ("K_ms", "K_ms_16", "K_ms_84")), ("table K", "table_K_ms"),
    ("m sin i (MJ)", ("msini_mjup", "msini_mjup_16", "msini_mjup_84")), ("e", ("e", "e_16", "e_84")),
    ("R-hat", "worst_rhat"), ("ESS", "min_ess"), ("generations", "generations"), ("s", "seconds")]

SORT_SCRIPT = """
function sortBy(column) {
  const table = document.getElementById('summary'), body = table.tBodies[0];
  const rows = Array.from(body.rows), up = table.dataset.column != column || table.dataset.up != '1';
  rows.sort((a, b) => {
    const x = a.cells[column].dataset.value, y = b.cells[column].dataset.value;
    const p = parseFloat(x), q = parseFloat(y);
    const c = !isNaN(p) && !isNaN(q) ? p - q : x.localeCompare(y);
    return up ? c : -c;
  });
  rows.forEach(r => body.appendChild(r));
  table.dataset.column = column;
  table.dataset.up = up ? '1' : '0';
}
window.addEventListener('load', () => {
  const images = Array.from(document.images);
  document.body.dataset.imagesLoaded = images.filter(i => i.complete && i.naturalWidth > 0).length;
  document.body.dataset.imagesBroken = images.filter(i => !(i.complete && i.naturalWidth > 0)).length;
});
"""


def number(text):
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def cell(row, column):
    """The text shown and the value sorted on."""
    if isinstance(column, tuple):
        median, low, high = (number(row.get(c, "")) for c in column)
        if median is None:
            return "", ""
        if low is None or high is None:
            return "%.4g" % median, repr(median)
        return "%.4g <small>+%.2g -%.2g</small>" % (median, high - median, median - low), repr(median)
    text = row.get(column, "")
    value = number(text)
    if value is not None and column not in ("points", "generations"):
        return "%.4g" % value, repr(value)
    return html.escape(text), text


def draw(job):
    """Plots of one target's run file into its folder; returns the PNG names (a failure: none)."""
    run_file, folder = job
    names = []
    try:
        os.makedirs(folder, exist_ok=True)
        with h5py.File(run_file, "r") as run:
            if "predictive" not in run or run["predictive/status"].shape[0] == 0:
                return names
            if "data/rv" in run:
                path = os.path.join(folder, "rv.png")
                if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(run_file):
                    swarmfit_plot.plot_rv(run, path)
                names.append("rv.png")
            if "data/transits" in run:
                swarmfit_plot.plot_ttvs(run, folder)
                names += sorted(n for n in os.listdir(folder) if n.startswith("ttv_") and n.endswith(".png"))
    except (OSError, KeyError, ValueError) as error:
        print("swarmfit catalog report: %s: %s" % (run_file, error), file=sys.stderr)
    return names


def main(argv):
    parser = argparse.ArgumentParser(prog="swarmfit_catalog_report.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("output", help="the catalog's output folder")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes drawing plots")
    args = parser.parse_args(argv)
    summary = os.path.join(args.output, "summary.csv")
    try:
        with open(summary, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as error:
        print("swarmfit catalog report: %s" % error, file=sys.stderr)
        return 2
    report = os.path.join(args.output, "report")
    os.makedirs(report, exist_ok=True)
    targets = list(dict.fromkeys(r["target"] for r in rows))
    jobs = []
    for target in targets:
        run_file = os.path.join(args.output, "targets", target, "run.h5")
        if os.path.exists(run_file):
            jobs.append((target, (run_file, os.path.join(report, target))))
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        plots = dict(zip((t for t, _ in jobs), pool.map(draw, [j for _, j in jobs])))

    out = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'><title>swarmfit catalog</title>",
           "<style>body{font-family:sans-serif} table{border-collapse:collapse} td,th{padding:2px 6px;"
           "border-bottom:1px solid #ddd;text-align:right} th{cursor:pointer;background:#eee} td:nth-child(-n+3)"
           "{text-align:left} img{max-width:48%;margin:4px}</style>",
           "<script>%s</script></head><body>" % SORT_SCRIPT,
           "<h1>swarmfit catalog: %d targets</h1>" % len(targets),
           "<p>Click a column to sort. Each target's plots follow the table; its run file, configuration and "
           "checks are in targets/NAME and report.txt.</p>",
           "<table id='summary'><thead><tr>"]
    out += ["<th onclick='sortBy(%d)'>%s</th>" % (k, html.escape(h)) for k, (h, _) in enumerate(COLUMNS)]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr data-target='%s'>" % html.escape(row["target"], quote=True))
        for _, column in COLUMNS:
            text, value = cell(row, column)
            if column == "target" and row["target"] in plots:
                text = "<a href='#%s'>%s</a>" % (html.escape(row["target"], quote=True), text)
            out.append("<td data-value='%s'>%s</td>" % (html.escape(value, quote=True), text))
        out.append("</tr>")
    out.append("</tbody></table>")
    for target in targets:
        names = plots.get(target, [])
        if not names:
            continue
        out.append("<h2 id='%s'>%s</h2>" % (html.escape(target, quote=True), html.escape(target)))
        out += ["<img src='%s/%s' alt='%s %s'>" % (html.escape(target, quote=True), n, html.escape(target, quote=True),
                                                      n) for n in names]
    out.append("</body></html>")
    page = os.path.join(report, "index.html")
    with open(page + ".partial", "w") as f:
        f.write("\n".join(out) + "\n")
    os.replace(page + ".partial", page)
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
