"""The field's idiom: emcee's EnsembleSampler with swarmfit's batched posterior (vectorize=True:
one swarmfit likelihood batch, one ensemble integration, per half of emcee's walkers)."""
import numpy as np
import pytest

import swarmfit
from conftest import DEMO_CONFIG

emcee = pytest.importorskip("emcee")

WALKERS, STEPS = 32, 300
# The stretch move's acceptance on a 14-parameter posterior is typically 0.2-0.5; outside
# [0.05, 0.8] the walkers are stuck or the posterior is flat (a broken likelihood or prior).
ACCEPTANCE_RANGE = (0.05, 0.8)
SCALES = {"period": 1e-5, "mass": 0.1, "secosw": 1e-3, "sesinw": 1e-3, "tc": 1e-4, "offset": 0.1, "jitter": 0.01}


def test_emcee_vectorized_run_on_the_demo_data():
    model = swarmfit.Model.from_config(DEMO_CONFIG)
    calls = []

    def log_probability(theta):
        calls.append(len(theta))
        return model.log_posterior(theta)

    sampler = emcee.EnsembleSampler(WALKERS, model.ndim, log_probability, vectorize=True)
    # emcee draws from its own unseeded RandomState: seeded here, so the test is the same every run.
    sampler.random_state = np.random.RandomState(3).get_state()
    rng = np.random.default_rng(3)
    # A small ball around the configuration's values (a rough guess, as the demo's), per kind of parameter.
    scale = np.array([SCALES[name.split("_")[0]] for name in model.free_names])
    start = model.initial + scale * rng.standard_normal((WALKERS, model.ndim))
    assert np.isfinite(model.log_posterior(start)).all()
    sampler.run_mcmc(start, STEPS, progress=False)
    log_probability_chain = sampler.get_log_prob()
    assert np.isfinite(log_probability_chain).all()
    assert set(calls) == {WALKERS, WALKERS // 2}  # the start, then each half of the walkers
    acceptance = sampler.acceptance_fraction.mean()
    assert ACCEPTANCE_RANGE[0] < acceptance < ACCEPTANCE_RANGE[1], acceptance
    # The walkers climbed from the rough start towards the peak, and stay on the data's periods.
    assert log_probability_chain[-1].mean() > log_probability_chain[0].mean()
    period_b = sampler.get_chain()[-1, :, model.free_names.index("period_b")]
    assert np.all(np.abs(period_b - 9.80) < 0.01)
