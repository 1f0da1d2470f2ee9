"""swarmfit.Model: the batched log-likelihood, prior and posterior equal the command's bitwise (the
values stored in its run file), a model built in Python equals the same model read from files,
predictions agree with the run file's, and failures are -inf with a status, never NaN."""
import os

import h5py
import numpy as np
import pytest

import swarmfit
from conftest import DEMO_CONFIG, REPOSITORY

# The model's transit times from its own integration and from the fit's predictive draws, which
# integrate the same steps a little further (predict(): extra_time): equal up to round-off.
TRANSIT_TIME_TOLERANCE_DAYS = 1e-9


@pytest.fixture(scope="module")
def model():
    return swarmfit.Model.from_config(DEMO_CONFIG)


@pytest.fixture(scope="module")
def chain(cli_run):
    with h5py.File(cli_run, "r") as f:
        return {name: f["chain"][name][()] for name in f["chain"]} | {
            "names": [str(n) for n in f["chain/parameters"].attrs["names"]],
            "predictive": {name: f["predictive"][name][()] for name in f["predictive"]},
            "best": int(f["predictive"].attrs["best"])}


def test_parameters_units_and_priors(model):
    assert model.names[:3] == ["star_mass", "period_b", "mass_b"]
    assert model.free_names[0] == "period_b" and "star_mass" not in model.free_names
    assert model.ndim == 12 == len(model.free_names)
    assert model.units["period_b"] == "day" and model.units["mass_b"] == "Earth mass"
    assert model.priors["jitter_SIM"] == "log_uniform(0.01, 30)" and model.priors["inc_b"] == "fixed(89.5)"
    assert model.values["period_b"] == 9.80 and model.initial[0] == 9.80
    assert model.planets == ["b", "c"] and model.instruments == ["SIM"]
    assert model.settings["walkers"] == "48" and model.backend == "cpu" and model.integrator == "mvs"
    assert len(model.rv_data) == 50 and len(model.transit_data) == 137


def test_log_likelihood_equals_the_command_bitwise(model, chain):
    assert model.free_names == chain["names"]
    theta = chain["parameters"].reshape(-1, model.ndim)  # every kept draw of every walker: one batch
    lnl, status, names = model.log_likelihood(theta, return_status=True)
    assert lnl.dtype == np.float64 and lnl.shape == (len(theta),)
    assert np.array_equal(lnl, chain["log_likelihood"].ravel())
    assert np.array_equal(status, chain["status"].ravel()) and set(names) == {"ok"}
    assert np.array_equal(model.log_prior(theta), chain["log_prior"].ravel())
    assert np.array_equal(model.log_posterior(theta), chain["log_prior"].ravel() + chain["log_likelihood"].ravel())
    # One row, a few rows and the whole batch give the same bits.
    assert model.log_likelihood(theta[5]) == lnl[5]
    assert np.array_equal(model.log_likelihood(theta[7:10]), lnl[7:10])


def test_failures_are_minus_infinity_with_a_status(model):
    good = model.initial
    outside = good.copy()
    outside[model.free_names.index("period_b")] = 12.0  # prior uniform(9.7, 9.9)
    unbound = good.copy()
    unbound[model.free_names.index("secosw_b")] = 1.2  # e = 1.44 + sesinw^2 > 1
    values, status, names = model.log_posterior(np.array([good, outside, unbound]), return_status=True)
    assert np.isfinite(values[0]) and names[0] == "ok"
    assert values[1] == -np.inf and names[1] == swarmfit.status_name(10)
    assert values[2] == -np.inf  # outside the prior of secosw_b too
    lnl, code, name = model.log_likelihood(unbound, return_status=True)
    assert lnl == -np.inf and code == 9 and name == swarmfit.status_name(9)
    assert not np.isnan(model.log_likelihood(np.array([good, unbound]))).any()


def test_predictions_agree_with_the_run_file(model, chain):
    predictive = chain["predictive"]
    best = predictive["parameters"][chain["best"]]  # every model parameter
    theta = best[model.free]
    assert np.array_equal(model.expand(theta), best)
    transits = model.transit_times(theta)
    assert transits.model.shape == (137,) and transits.status == 0
    assert np.allclose(transits.model, predictive["transit_model"][chain["best"]], rtol=0,
                       atol=TRANSIT_TIME_TOLERANCE_DAYS)
    assert list(transits.planet[:2]) == ["b", "b"] and transits.epoch[0] == 0
    # The best draw fits the data: transit residuals of the order of their errors.
    residual = (transits.model - transits.observed) / transits.error
    assert np.sqrt(np.mean(residual ** 2)) < 3
    # RV at arbitrary times, any order, = the same times sorted; at the data, plus the offset,
    # close to the data (jitter 1.5 m/s, errors 2.5 m/s).
    data = model.rv_data
    times = data["time"].to_numpy()
    rv = model.rv(theta, times)
    shuffled = np.random.default_rng(1).permutation(len(times))
    assert np.array_equal(model.rv(theta, times[shuffled]), rv[shuffled])
    offset = best[model.names.index("offset_SIM")]
    assert np.sqrt(np.mean(((rv + offset - data["rv"]) / data["error"]) ** 2)) < 3
    grid = np.linspace(model.reference_epoch + 1, model.reference_epoch + 100, 500)
    curves = model.rv(np.array([theta, theta]), grid)
    assert curves.shape == (2, 500) and np.array_equal(curves[0], curves[1])
    assert 5 < np.ptp(curves[0]) < 50  # K_b + K_c of the truth: about 9 + 13 m/s


def test_model_built_in_python_equals_the_configuration(model):
    demo = REPOSITORY / "examples" / "demo" / "data"
    rv = np.loadtxt(demo / "rv.txt")
    transits = {p: np.loadtxt(demo / f"transits_{p}.txt") for p in ("b", "c")}
    built = swarmfit.Model(
        star_mass=1.0, star_radius=1.0, reference_epoch=2460000.0,
        planets={"b": {"period": 9.80, "mass": 20, "tc": 2460003.70, "inc": 89.5},
                 "c": {"period": 19.90, "mass": 20, "tc": 2460011.20, "inc": 89.7}},
        rv={"time": rv[:, 0], "rv": rv[:, 1], "error": rv[:, 2], "instrument": "SIM"},
        transits={p: {"epoch": t[:, 0], "time": t[:, 1], "error": t[:, 2]} for p, t in transits.items()},
        instruments={"SIM": {"jitter": 1.0}},
        priors=model.priors, walkers=48)
    assert built.names == model.names and built.free_names == model.free_names and built.priors == model.priors
    assert built.values == model.values and built.time_step == model.time_step
    assert "[planet b]" in built.config_text
    theta = model.initial + 1e-4 * np.random.default_rng(2).standard_normal((16, model.ndim))
    assert np.array_equal(built.log_posterior(theta), model.log_posterior(theta))
    # Per-point instrument names give the same model.
    per_point = swarmfit.Model(star_mass=1.0, reference_epoch=2460000.0, planets={"b": {"period": 9.8, "mass": 20,
                               "tc": 2460003.7}}, rv={"time": rv[:, 0], "rv": rv[:, 1], "error": rv[:, 2],
                               "instrument": ["A"] * 25 + ["B"] * 25})
    assert per_point.instruments == ["A", "B"] and per_point.ndim == len(per_point.names)  # no [priors]: all free
    lnl = per_point.log_likelihood(per_point.initial)
    assert np.isfinite(lnl)
    with pytest.raises(swarmfit.InputError, match="no \\[priors\\] section"):
        per_point.log_prior(per_point.initial)


def test_overrides_are_the_command_line_keys(model):
    one_thread = swarmfit.Model.from_config(DEMO_CONFIG, threads=1, time_step=0.4)
    assert one_thread.time_step == 0.4 and one_thread.settings["threads"] == "1"
    assert one_thread.overrides == ["threads=1", "time_step=0.4"]
    if not swarmfit.cuda_available():  # as the command: a failure at the first batch, not bad input
        with pytest.raises(RuntimeError, match="cuda|CUDA"):
            swarmfit.Model.from_config(DEMO_CONFIG, backend="cuda").log_likelihood(model.initial)


@pytest.mark.skipif(not swarmfit.cuda_available(), reason="no CUDA device (or a build without the CUDA backend)")
def test_cuda_backend_reproducible_is_the_cpu_bitwise(model, chain):
    """backend=cuda with reproducible=true: the GPU's kernels with the CPU's arithmetic and a host
    set-up, so the same bits as the cpu backend (README, "Design")."""
    gpu = swarmfit.Model.from_config(DEMO_CONFIG, backend="cuda", reproducible=True)
    theta = chain["parameters"].reshape(-1, model.ndim)
    assert gpu.backend == "cuda"
    assert np.array_equal(gpu.log_likelihood(theta), model.log_likelihood(theta))
    assert np.array_equal(gpu.log_posterior(theta), model.log_posterior(theta))


def test_stability_of_rows_matches_the_command(model, tmp_path):
    """Model.stability integrates rows as `swarmfit stability --params` does: the same status and
    MEGNO for the same sets; a row of crossing orbits is flagged by the criteria."""
    import subprocess

    rows = np.array([model.initial, model.initial])
    rows[1][model.free_names.index("secosw_b")] = 0.6
    rows[1][model.free_names.index("sesinw_b")] = 0.6  # e_b = 0.72: crosses c's orbit
    table = model.stability(rows, horizon_orbits=200)
    assert list(table["status"])[0] == "ok" and table["survived"][0]
    assert 1.9 < table["megno"][0] < 2.5
    assert table["crossing"][1] and not table["amd_stable"][1]
    assert (table["max_e_b"] >= 0).all() and np.isfinite(table["closest_hill"][0])
    # The same two rows (a batch shares one step: the one its most eccentric orbit needs).
    full = model.expand(rows)
    params = tmp_path / "sets.csv"
    params.write_text(",".join(model.names) + "\n" + "".join(",".join(repr(float(v)) for v in f) + "\n" for f in full))
    out = tmp_path / "cli.csv"
    subprocess.run([os.environ["SWARMFIT_BINARY"], "stability", "--config", str(DEMO_CONFIG), "--params", str(params),
                    "--horizon", "200", "--output", str(out)], check=True, capture_output=True)
    import pandas as pd

    cli = pd.read_csv(out)
    assert cli["status"][0] == "ok"
    assert cli["megno"][0] == pytest.approx(table["megno"][0], rel=1e-9)
    with pytest.raises(swarmfit.InputError, match="horizon_orbits > 0"):
        model.stability(rows, horizon_orbits=-1)


def test_mean_ephemeris_is_refused_not_misread():
    """A configuration with ephemeris = mean: its periods and tc are the fit's anchored mean-ephemeris
    coordinates, which the model cannot evaluate without the fit's map: refused, never read as
    osculating elements."""
    m = swarmfit.Model.from_config(DEMO_CONFIG, ephemeris="mean", least_squares=5)
    with pytest.raises(swarmfit.InputError, match="ephemeris = mean"):
        m.log_posterior(m.initial)
