"""Bad input from Python raises swarmfit.InputError (a ValueError) carrying exactly the one line the
command prints after 'swarmfit: error: ', before any work and without leaving a file behind."""
import numpy as np
import pytest

import swarmfit
from conftest import DEMO_CONFIG, command_error


def same_error(binary, call, *command):
    expected = command_error(binary, *command)
    with pytest.raises(swarmfit.InputError) as error:
        call()
    assert str(error.value) == expected
    return expected


def test_unknown_override_key(swarmfit_binary, tmp_path):
    message = same_error(swarmfit_binary, lambda: swarmfit.Model.from_config(DEMO_CONFIG, walkres=48),
                         "fit", "--config", DEMO_CONFIG, "walkres=48", f"output={tmp_path / 'x.h5'}")
    assert message == "command line: unknown key 'walkres' (did you mean 'walkers'?)"


def test_unknown_key_in_a_file_names_its_line(swarmfit_binary, tmp_path):
    text = DEMO_CONFIG.read_text().replace("seed = 1", "sead = 1")
    text = text.replace("file = data/", f"file = {DEMO_CONFIG.parent}/data/")
    config = tmp_path / "typo.cfg"
    config.write_text(text)
    message = same_error(swarmfit_binary, lambda: swarmfit.Model.from_config(config), "fit", "--config", config)
    assert message.startswith(f"{config}:") and "unknown key 'sead' (did you mean 'seed'?)" in message


def test_missing_configuration_file(swarmfit_binary, tmp_path):
    missing = tmp_path / "missing.cfg"
    same_error(swarmfit_binary, lambda: swarmfit.Model.from_config(missing), "fit", "--config", missing)


def test_bad_fit_key_leaves_no_file(swarmfit_binary, tmp_path):
    output = tmp_path / "fit.h5"
    same_error(swarmfit_binary, lambda: swarmfit.fit(DEMO_CONFIG, output=output, generations=0),
               "fit", "--config", DEMO_CONFIG, f"output={output}", "generations=0")
    assert list(tmp_path.iterdir()) == []


def test_missing_run_file(swarmfit_binary, tmp_path):
    missing = tmp_path / "missing.h5"
    same_error(swarmfit_binary, lambda: swarmfit.open_run(missing), "summary", missing)


def test_wrong_theta_shape():
    model = swarmfit.Model.from_config(DEMO_CONFIG)
    for theta in (np.zeros(11), np.zeros((4, 13)), np.zeros((2, 3, 12))):
        with pytest.raises(swarmfit.InputError, match=r"theta: expected shape \(n, 12\) or \(12,\)"):
            model.log_likelihood(theta)
    with pytest.raises(swarmfit.InputError, match="theta"):
        model.log_posterior(np.zeros((4, 11)))
    with pytest.raises(swarmfit.InputError, match="times: expected a 1-D array"):
        model.rv(model.initial, np.zeros((2, 2)))
    with pytest.raises(swarmfit.InputError, match="after reference_epoch"):
        model.rv(model.initial, [model.reference_epoch - 1.0])
    assert issubclass(swarmfit.InputError, ValueError)
