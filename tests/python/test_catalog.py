"""swarmfit.catalog: the command's catalog from Python. A small Systemic-format catalog made here
(one star, one planet at P = 5 d, K = 50 m/s, in an m/s file and a km/s file) gives the summary of
`swarmfit catalog` row for row (the fits' seconds aside), and the planet back; bad input raises
InputError with the command's line."""
import math

import numpy as np
import pytest

import swarmfit
from conftest import run_command

SHORT = {"generations": 300, "optimize": 100, "walkers": 24, "ess_target": 0, "threads": 1}


@pytest.fixture
def description(tmp_path):
    folder = tmp_path / "cat"
    folder.mkdir()
    rng = np.random.default_rng(3)
    signal = lambda t: 50.0 * np.sin(2 * np.pi * (t - 2455001.3) / 5.0)
    t1 = 2455000.0 + 3.7 * np.arange(40)
    t2 = 2455002.1 + 4.3 * np.arange(40)
    with open(folder / "Star_1_KECK.vels", "w") as f:
        f.write("# value_units = M/S\n")
        for t in t1:
            f.write(f"{t:.5f} {signal(t) + 3 * rng.normal():.3f} 3.0\n")
    with open(folder / "Star_2_3.6M.vels", "w") as f:
        f.write("# value_units = KM/S\n")
        for t in t2:
            f.write(f"{t:.5f} {-7.5 + (signal(t) + 3 * rng.normal()) / 1000:.6f} 0.003\n")
    (folder / "Star.sys").write_text("# Data from http://exoplanetarchive.ipac.caltech.edu/\nName\tStar\nMass\t1.0\n"
                                     "RV[]\tStar_1_KECK.vels\nRV[]\tStar_2_3.6M.vels\n")
    (folder / "planets.csv").write_text("system,planet,period_days,K_ms,e,omega_deg,tperi_or_tc,time_kind\n"
                                        "Star,b,5.0,50,,,2455001.3,tc\n")
    path = tmp_path / "catalog.cfg"
    path.write_text("folder = cat\nplanets = planets.csv\n")
    return path


def without_seconds(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def test_catalog_gives_the_command_summary_and_the_planet(description, tmp_path, swarmfit_binary):
    checked = swarmfit.catalog(description, tmp_path / "checked", check=True)
    assert checked["targets"] == ["Star"] and checked["skipped"] == {} and checked["rows"] == []
    assert "KM/S: RVs and errors converted to m/s" in open(checked["report"]).read()

    result = swarmfit.catalog(description, tmp_path / "py", **SHORT)
    assert result["fitted"] == 1 and result["failed"] == 0
    (row,) = result["rows"]
    assert row["target"] == "Star" and row["planet"] == "b" and row["status"] == "not converged"
    sd_k = (row["K_ms_84"] - row["K_ms_16"]) / 2
    assert abs(row["K_ms"] - 50.0) < max(4 * sd_k, 1.0), row
    assert abs(row["period_d"] - 5.0) < 2e-3, row

    args = [f"{k}={v}" for k, v in SHORT.items()]
    code, out, err = run_command(swarmfit_binary, "catalog", "--no-report", "--config", description, "--output",
                                 tmp_path / "cli", *args)
    assert code == 0, err
    cli = swarmfit.catalog(description, tmp_path / "cli", **SHORT)  # everything kept: reads the summary
    assert cli["fitted"] == 0 and cli["kept"] == 1
    same_rows(cli["rows"], result["rows"])

    # Packed (the batches through a LaunchPacker, here on the CPU): the same fit, the same rows.
    packed = swarmfit.catalog(description, tmp_path / "packed", pack="on", **SHORT)
    assert packed["fitted"] == 1 and packed["packed_batches"] > 0 and packed["packed_rounds"] > 0
    same_rows(packed["rows"], result["rows"])

    # On backend="cuda" with one host target, the star (the only target) is fitted on the CPU with
    # the chain it gives there alone, whether or not the machine has a GPU.
    host = swarmfit.catalog(description, tmp_path / "host", host_targets=1, backend="cuda", **SHORT)
    assert host["fitted"] == 1 and host["failed"] == 0
    same_rows(host["rows"], result["rows"])


def same_rows(a_rows, b_rows):
    a_rows, b_rows = without_seconds(a_rows), without_seconds(b_rows)
    assert len(a_rows) == len(b_rows)
    for a, b in zip(a_rows, b_rows):
        for k in a:
            assert (isinstance(a[k], float) and math.isnan(a[k]) and math.isnan(b[k])) or a[k] == b[k], (k, a, b)


def test_bad_catalog_input_raises_the_command_line(description, tmp_path):
    with pytest.raises(swarmfit.InputError, match="unknown key 'walkrs'"):
        swarmfit.catalog(description, tmp_path / "x", walkrs=30)
    with pytest.raises(swarmfit.InputError, match=r"jobs \(--jobs\) must be 1 to 1024"):
        swarmfit.catalog(description, tmp_path / "x", jobs=0)
    with pytest.raises(swarmfit.InputError, match=r"pack \(--pack\) must be auto, on or off"):
        swarmfit.catalog(description, tmp_path / "x", pack="sometimes")
    with pytest.raises(swarmfit.InputError, match=r"host targets \(--host-targets\) must be 0 to 100000"):
        swarmfit.catalog(description, tmp_path / "x", host_targets=-1)
