"""swarmfit.fit, open_run and Run against the command: the same configuration, seed and keys give
bitwise the command's chain and state; a KeyboardInterrupt saves the state and resume=True
continues it bitwise; the posterior summary is the command's table, and ArviZ's R-hat and ESS of
run.to_arviz() equal it."""
import csv
import os
import signal
import threading

import h5py
import numpy as np
import pytest

import swarmfit
from conftest import DEMO_CONFIG, SHORT_FIT

# Rank-normalised split R-hat and bulk/tail ESS (Vehtari et al. 2021), mean and sd computed by
# ArviZ and by swarmfit from the same draws: the same formulas in another order of floating-point
# operations (measured: within 3e-14).
DIAGNOSTICS_RELATIVE_TOLERANCE = 1e-9


def datasets(path, group):
    with h5py.File(path, "r") as f:
        return {name: f[group][name][()] for name in f[group]}


def assert_same_run_file(ours, theirs):
    for group in ("chain", "state"):
        a, b = datasets(ours, group), datasets(theirs, group)
        assert sorted(a) == sorted(b)
        for name in a:
            assert np.array_equal(a[name], b[name]), f"/{group}/{name} differs"


@pytest.fixture(scope="module")
def python_run(tmp_path_factory):
    output = tmp_path_factory.mktemp("python_fit") / "python.h5"
    return swarmfit.fit(DEMO_CONFIG, output=output, **SHORT_FIT)


def test_fit_gives_the_command_chain_bitwise(python_run, cli_run):
    assert_same_run_file(python_run.path, cli_run)
    with h5py.File(cli_run, "r") as f:
        assert np.array_equal(python_run.chain, f["chain/parameters"][()])
        assert np.array_equal(python_run.log_likelihood, f["chain/log_likelihood"][()])
        assert python_run.free_names == [str(n) for n in f["chain/parameters"].attrs["names"]]
        assert python_run.first_draw == int(f.attrs["burn_in_draws"])
    assert python_run.generation == SHORT_FIT["generations"]
    assert not python_run.interrupted and 0.05 < python_run.acceptance < 0.9


def test_open_run_reads_what_the_fit_returned(python_run, cli_run):
    run = swarmfit.open_run(cli_run)
    for name in ("chain", "log_likelihood", "log_prior", "log_posterior", "status", "accepted", "generations"):
        assert np.array_equal(getattr(run, name), getattr(python_run, name)), name
    assert run.first_draw == python_run.first_draw and run.free_names == python_run.free_names
    assert run.units == python_run.units and run.priors["period_b"] == "uniform(9.7, 9.9)"
    frame = run.posterior
    kept = run.chain[run.first_draw:]
    assert list(frame.columns) == ["draw", "walker", *run.free_names]
    assert len(frame) == kept.shape[0] * kept.shape[1]
    assert np.array_equal(frame[run.free_names].to_numpy(), kept.reshape(-1, kept.shape[2]))
    row = frame.iloc[run.num_walkers + 3]
    assert row["draw"] == run.first_draw + 1 and row["walker"] == 3


def test_summary_is_the_command_table(python_run, cli_run):
    summary = python_run.summary()
    with open(str(cli_run)[:-3] + "_summary.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert list(summary.index) == [r["parameter"] for r in rows]
    for r in rows:
        ours = summary.loc[r["parameter"]]
        for column in ("median", "lower_16", "upper_84", "lower_2.5", "upper_97.5", "mean", "sd"):
            assert float(r[column]) == ours[column], (r["parameter"], column)  # written with %.17g
        for column in ("rhat", "ess_bulk", "ess_tail"):  # written with %.6g
            if r["derived"] == "0":
                assert float(r[column]) == pytest.approx(ours[column], rel=1e-5), (r["parameter"], column)
        assert bool(int(r["derived"])) == ours["derived"]
    assert summary["derived"].any()  # masses, semi-major axes, e, omega per planet


def test_arviz_summary_equals_swarmfit_summary(python_run):
    az = pytest.importorskip("arviz")
    idata = python_run.to_arviz()
    assert idata.posterior.sizes["chain"] == python_run.num_walkers
    assert idata.posterior.sizes["draw"] == python_run.num_draws - python_run.first_draw
    theirs = az.summary(idata, round_to="none")
    ours = python_run.summary()
    for name in python_run.free_names:
        for their_column, our_column in (("r_hat", "rhat"), ("ess_bulk", "ess_bulk"), ("ess_tail", "ess_tail"),
                                         ("mean", "mean"), ("sd", "sd")):
            assert theirs.loc[name, their_column] == pytest.approx(
                ours.loc[name, our_column], rel=DIAGNOSTICS_RELATIVE_TOLERANCE), (name, our_column)
        assert float(np.median(idata.posterior[name])) == ours.loc[name, "median"]


def test_keyboard_interrupt_saves_the_state_and_resume_continues_bitwise(cli_run, tmp_path):
    """Ctrl-C as SIGINT arriving while the C++ loop runs: the fit stops at its next generation, the
    run file holds the state, and resume=True gives the uninterrupted (the command's) chain."""
    output = tmp_path / "interrupted.h5"
    started = threading.Event()

    def send_sigint():
        started.wait()
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=send_sigint)
    sender.start()
    reports = []

    def callback(report):
        reports.append(report)
        if report["phase"] == "sample":
            started.set()

    try:
        with pytest.raises(KeyboardInterrupt, match="state saved in"):
            swarmfit.fit(DEMO_CONFIG, output=output, callback=callback, **SHORT_FIT)
    finally:
        started.set()
        sender.join()
    stopped = swarmfit.open_run(output)
    assert 0 < stopped.generation < SHORT_FIT["generations"]
    resumed = swarmfit.fit(DEMO_CONFIG, output=output, resume=True, **SHORT_FIT)
    assert resumed.generation == SHORT_FIT["generations"]
    assert_same_run_file(output, cli_run)


def test_keyboard_interrupt_in_the_callback_saves_the_state(tmp_path):
    output = tmp_path / "callback.h5"

    def callback(report):
        if report["phase"] == "sample" and not report["finished"]:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        swarmfit.fit(DEMO_CONFIG, output=output, callback=callback, **SHORT_FIT)
    assert 0 < swarmfit.open_run(output).generation < SHORT_FIT["generations"]


def test_callback_errors_stop_the_fit_and_propagate(tmp_path):
    def callback(report):
        raise RuntimeError("from the callback")

    with pytest.raises(RuntimeError, match="from the callback"):
        swarmfit.fit(DEMO_CONFIG, output=tmp_path / "error.h5", callback=callback, **SHORT_FIT)


def test_fit_of_a_model_object_takes_its_overrides(tmp_path):
    model = swarmfit.Model.from_config(DEMO_CONFIG, walkers=40)
    run = swarmfit.fit(model, output=tmp_path / "model.h5", generations=20, optimize=0, progress="off")
    assert run.num_walkers == 40 and run.num_draws == 20
