"""swarmfit.catalog: many targets fitted by the fit pipeline, one summary (`swarmfit catalog`)."""
import csv
import math
import os

from . import _core
from .model import overrides


def catalog(config, output, *, targets=None, max_targets=None, jobs=1, pack="auto", check=False, host_targets=0,
            **keys):
    """Fit every target of a catalog description, as ``swarmfit catalog`` does (README, "Catalogs").

    config: the description (``folder`` and ``planets``, or ``targets``, [target NAME] sections,
    shared keys); output: the results folder; targets: names to fit (all when None); max_targets:
    the first N; jobs: targets fitted at once (threads); pack: "auto", "on" or "off", whether the
    likelihood batches of the targets fitted at once share launches (auto: with jobs > 1 on
    backend="cuda"; the chains are the same either way); check: read and check only (the report and
    configurations, no fit); host_targets: with backend="cuda", the N targets whose one system's
    integration is longest are fitted on the host's CPU cores instead (``--host-targets``); keys: model and fit keys for every target (``generations=``,
    ``walkers=``, ``backend="cuda"``). Finished targets are kept and a target in progress resumes
    when called again. Returns a dict: ``targets`` (names), ``skipped`` (name -> why), ``fitted``,
    ``kept``, ``failed`` (counts of this call), ``packed_rounds`` and ``packed_batches`` (the
    shared launches' rounds and the batches they served, 0 without packing), ``report`` (the checks' report), ``summary`` (the
    summary CSV's path, "" with check) and ``rows`` (the summary's rows as dicts, numbers as float;
    empty with check). Bad input raises swarmfit.InputError."""
    result = _core.catalog(os.fspath(config), os.fspath(output), overrides(keys), list(targets or []),
                           int(max_targets or 0), int(jobs), str(pack), bool(check), int(host_targets))
    result = dict(result)
    rows = []
    if result["summary"]:
        with open(result["summary"], newline="") as f:
            for row in csv.DictReader(f):
                for key, value in row.items():
                    if key not in ("target", "planet", "status"):
                        try:
                            row[key] = float(value)
                        except ValueError:
                            row[key] = math.nan
                rows.append(row)
    result["rows"] = rows
    return result
