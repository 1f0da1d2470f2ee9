// Initial conditions for the particle-mesh engine, equal-mass particles, G = 1 units where the
// model has them, centred on `centre` (centre of mass at rest there).
#pragma once

#include <cstdint>

#include "swarmfit/pm/pm.hpp"

namespace swarmfit::pm {

// A Plummer sphere of total mass `mass`, Henon units scaled by `length` (its Plummer radius is
// 3 pi / 16 x length; Aarseth, Henon & Wielen 1974), radii beyond max_radius x length drawn again.
template <class Real>
ParticleSet<Real> plummer(long n, std::uint64_t seed, double mass = 1.0, double length = 1.0, double max_radius = 0.0);
// A Hernquist (1990, ApJ 356, 359) sphere of total mass `mass` and scale radius a (G = 1):
// radii from M(r) = M r^2 / (r + a)^2 inverted, r = a sqrt(u) / (1 - sqrt(u)), drawn again
// beyond max_radius x a; speeds from the isotropic distribution function (Hernquist 1990
// eq. 17) by rejection at each radius, so the sphere is in equilibrium (but for the truncation).
template <class Real>
ParticleSet<Real> hernquist(long n, std::uint64_t seed, double mass = 1.0, double a = 1.0, double max_radius = 50.0);
// A uniform sphere of radius `radius` and mass `mass` at rest (cold collapse).
template <class Real>
ParticleSet<Real> cold_sphere(long n, std::uint64_t seed, double mass = 1.0, double radius = 1.0);
// Two equal Plummer spheres (n/2 particles and mass/2 each, Henon units scaled by `length`)
// on a parabolic orbit of their centres: at separation `separation` along x and offset `impact`
// along y, approaching with the parabolic relative speed sqrt(2 G M / d) along x.
template <class Real>
ParticleSet<Real> collision(long n, std::uint64_t seed, double mass = 1.0, double length = 1.0,
                            double separation = 10.0, double impact = 1.0);
// Moves every particle by `centre`.
template <class Real>
void shift(ParticleSet<Real>& p, const double centre[3]);

}  // namespace swarmfit::pm
