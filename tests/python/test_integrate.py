"""swarmfit.integrate: the ensemble engine from arrays. A two-body orbit returns to its start after
one period (MVS in Jacobi coordinates integrates it exactly, up to round-off), energy errors are
reported, M copies of one system give bitwise the result of one, and bad input gets the command's
messages."""
import math

import numpy as np
import pytest

import swarmfit
from conftest import command_error

# One period of an e = 0.5 orbit in 100 MVS steps in Jacobi coordinates: with two bodies the Kepler
# part of the splitting is the whole Hamiltonian (the kick cancels to round-off), so each step is
# an exact Kepler drift and only round-off remains (tests/integrators/test_two_body.cpp). A broken
# drift or a wrong step would miss by orders of magnitude more: the test checks that leapfrog
# (second order) and democratic heliocentric MVS (whose jump is a splitting error for a massive
# pair) miss by more than 1e-6 with the same steps.
RETURN_TOLERANCE = 1e-11
ENERGY_TOLERANCE = 1e-12


def two_body(e=0.5, a=1.0, m_star=1.0, m_planet=1e-3, G=1.0):
    """Star and planet at pericentre of a Keplerian orbit, barycentric; returns the state and the period."""
    mu = G * (m_star + m_planet)
    r = a * (1 - e)
    v = math.sqrt(mu * (1 + e) / r)
    rel_x, rel_v = np.array([r, 0.0, 0.0]), np.array([0.0, v, 0.0])
    masses = np.array([m_star, m_planet])
    positions = np.array([-m_planet * rel_x, m_star * rel_x]) / (m_star + m_planet)
    velocities = np.array([-m_planet * rel_v, m_star * rel_v]) / (m_star + m_planet)
    return masses, positions, velocities, 2 * math.pi * math.sqrt(a ** 3 / mu)


def test_registry_lists_every_integrator_with_its_citation():
    names = [i["name"] for i in swarmfit.integrators()]
    assert {"mvs", "hermite", "rkck_adaptive", "leapfrog", "saba4"} <= set(names)
    for info in swarmfit.integrators():
        assert info["citation"] and info["order"] >= 2 and isinstance(info["symplectic"], bool)


def test_two_body_orbit_returns_to_its_start_after_one_period():
    masses, positions, velocities, period = two_body()
    result = swarmfit.integrate(masses, positions, velocities, integrator="mvs", time_step=period / 100,
                                t_end=period, mvs_coordinates="jacobi")
    assert result.status == 0 and result.status_names == "ok" and result.times == pytest.approx(period, rel=1e-15)
    assert result.steps >= 100
    scale = np.abs(positions).max()
    assert np.abs(result.positions - positions).max() < RETURN_TOLERANCE * scale
    assert np.abs(result.velocities - velocities).max() < RETURN_TOLERANCE * np.abs(velocities).max()
    assert abs(result.energy_error) < ENERGY_TOLERANCE
    # The tolerance is tight enough to fail a scheme that is not exact here.
    for inexact in ({"integrator": "leapfrog"}, {"integrator": "mvs", "mvs_coordinates": "democratic_heliocentric"}):
        other = swarmfit.integrate(masses, positions, velocities, time_step=period / 100, t_end=period, **inexact)
        assert np.abs(other.positions - positions).max() > 1e-6 * scale, inexact
        assert abs(other.energy_error) > abs(result.energy_error), inexact


def test_copies_of_one_system_give_bitwise_its_result():
    masses, positions, velocities, period = two_body(e=0.3)
    # A third body makes the interaction part work (a real three-body problem).
    masses = np.append(masses, 3e-4)
    positions = np.vstack([positions, [0.0, 2.1, 0.1]])
    velocities = np.vstack([velocities, [-0.68, 0.0, 0.0]])
    one = swarmfit.integrate(masses, positions, velocities, integrator="mvs", time_step=0.01, t_end=20.0)
    count = 37  # not a multiple of any SIMD width or chunk
    many = swarmfit.integrate(np.tile(masses, (count, 1)), np.tile(positions, (count, 1, 1)),
                              np.tile(velocities, (count, 1, 1)), integrator="mvs", time_step=0.01, t_end=20.0)
    assert many.positions.shape == (count, 3, 3) and many.energy_error.shape == (count,)
    for k in range(count):
        assert np.array_equal(many.positions[k], one.positions) and np.array_equal(many.velocities[k], one.velocities)
        assert many.energy_error[k] == one.energy_error and many.steps[k] == one.steps
    assert 0 < abs(one.energy_error) < 1e-5


def test_start_times_radii_and_monitors():
    masses, positions, velocities, period = two_body()
    far = positions * 5
    result = swarmfit.integrate(np.array([masses, masses]), np.array([positions, far]),
                                np.array([velocities, velocities * 3]), integrator="hermite",
                                time_step=1e-3, t_end=3.0, times=[1.0, 2.0], rmax=4.0)
    assert result.status[0] == 0 and result.times[0] == pytest.approx(3.0)
    assert result.status_names[1] == swarmfit.status_name(2)  # ejected: beyond rmax
    assert result.times[1] < 3.0


def test_unknown_integrator_is_the_command_error(swarmfit_binary):
    masses, positions, velocities, period = two_body()
    expected = command_error(swarmfit_binary, "integrate", "integrator=mvz")
    assert expected.startswith("command line: key 'integrator': unknown integrator 'mvz' (known: ")
    with pytest.raises(swarmfit.InputError) as error:
        swarmfit.integrate(masses, positions, velocities, integrator="mvz", time_step=0.1, t_end=1.0)
    assert str(error.value) == expected
    assert isinstance(error.value, ValueError)


def test_bad_keys_and_values_are_the_command_errors(swarmfit_binary):
    masses, positions, velocities, period = two_body()
    for key, value in (("time_stepp", 0.1), ("error_tolerance", -1), ("mvs_coordinates", "polar")):
        expected = command_error(swarmfit_binary, "integrate", f"{key}={value}")
        with pytest.raises(swarmfit.InputError) as error:
            swarmfit.integrate(masses, positions, velocities, time_step=0.1, t_end=1.0, **{key: value})
        assert str(error.value) == expected
    with pytest.raises(swarmfit.InputError, match="not after the start time of system 0"):
        swarmfit.integrate(masses, positions, velocities, time_step=0.1, t_end=0.0)
    with pytest.raises(swarmfit.InputError, match="key 'nsys': not a key of swarmfit.integrate"):
        swarmfit.integrate(masses, positions, velocities, time_step=0.1, t_end=1.0, nsys=4)


def test_bad_arrays():
    masses, positions, velocities, period = two_body()
    with pytest.raises(swarmfit.InputError, match="positions: expected shape"):
        swarmfit.integrate(masses, positions[:, :2], velocities, time_step=0.1, t_end=1.0)
    with pytest.raises(swarmfit.InputError, match="system 0 body 1: negative mass"):
        swarmfit.integrate(masses * [1, -1], positions, velocities, time_step=0.1, t_end=1.0)
    with pytest.raises(swarmfit.InputError, match="system 0 body 0 coincides with body 1"):
        swarmfit.integrate(masses, positions * 0, velocities, time_step=0.1, t_end=1.0)
    with pytest.raises(swarmfit.InputError, match="non-finite"):
        swarmfit.integrate(masses, positions * np.nan, velocities, time_step=0.1, t_end=1.0)
    with pytest.raises(swarmfit.InputError, match="17 bodies per system"):
        swarmfit.integrate(np.ones(17), np.arange(51.0).reshape(17, 3), np.zeros((17, 3)), time_step=0.1, t_end=1.0)
