"""Shared fixtures of the Python package's tests (tests/python/test_*.py), run by ctest with the
built package on PYTHONPATH (build/python) and the command's path in SWARMFIT_BINARY, or by hand:

    PYTHONPATH=build/python SWARMFIT_BINARY=build/apps/swarmfit python3 -m pytest tests/python
"""
import os
import pathlib
import subprocess

import pytest

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
DEMO_CONFIG = REPOSITORY / "examples" / "demo" / "fit.cfg"
# A short fit of the demo data: the demo's optimisation, then 300 generations of 48 walkers, no
# stopping rule (every run the same length), the same seed and keys for the command and swarmfit.fit.
SHORT_FIT = {"generations": 300, "seed": 7, "ess_target": 0, "progress": "off"}


@pytest.fixture(scope="session")
def swarmfit_binary():
    path = os.environ.get("SWARMFIT_BINARY")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("SWARMFIT_BINARY does not name the swarmfit command (ctest sets it)")
    return path


def run_command(binary, *args, cwd=None):
    """The swarmfit command: (exit code, stdout, stderr)."""
    done = subprocess.run([binary, *map(str, args)], cwd=cwd, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def command_error(binary, *args):
    """The one line the command prints after 'swarmfit: error: ' for bad input (exit code 2)."""
    code, out, err = run_command(binary, *args)
    assert code == 2, (code, out, err)
    assert err.startswith("swarmfit: error: ") and err.count("\n") == 1, err
    return err[len("swarmfit: error: "):].rstrip("\n")


@pytest.fixture(scope="session")
def cli_run(swarmfit_binary, tmp_path_factory):
    """The command's short fit of the demo data: its run file and summary CSV."""
    folder = tmp_path_factory.mktemp("cli_fit")
    output = folder / "cli.h5"
    keys = [f"{k}={v}" for k, v in SHORT_FIT.items()]
    code, out, err = run_command(swarmfit_binary, "fit", "--config", DEMO_CONFIG, f"output={output}", *keys)
    assert code == 0, out + err
    return output
