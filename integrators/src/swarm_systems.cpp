#include "swarmfit/integrators/swarm_systems.hpp"

#include <cmath>

namespace swarmfit {

namespace {

// SplitMix64 (Steele, Lea & Flood 2014): a counter-based hash, so a system's phases depend only
// on (seed, system, planet).
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double uniform01(std::uint64_t seed, std::uint64_t system, std::uint64_t planet) {
  const std::uint64_t h = splitmix64(splitmix64(splitmix64(seed) ^ system) ^ planet);
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

}  // namespace

std::unique_ptr<Ensemble> generate_swarm_ensemble(const GeneratorSettings& s) {
  auto e = std::make_unique<Ensemble>(s.num_systems, s.num_bodies);
  const double two_pi = 6.283185307179586;
  for (long sys = 0; sys < s.num_systems; ++sys) {
    e->mass(sys, 0) = 1.0;
    for (int i = 1; i < s.num_bodies; ++i) {
      const double a = std::pow(1.0 + s.spacing_factor, i - 1);
      const double speed = std::sqrt(s.G * (1.0 + s.planet_mass) / a);
      const double phase = two_pi * uniform01(s.seed, static_cast<std::uint64_t>(sys), static_cast<std::uint64_t>(i));
      e->mass(sys, i) = s.planet_mass;
      e->position(sys, i, 0) = a * std::cos(phase);
      e->position(sys, i, 1) = a * std::sin(phase);
      e->velocity(sys, i, 0) = -speed * std::sin(phase);
      e->velocity(sys, i, 1) = speed * std::cos(phase);
    }
  }
  return e;
}

}  // namespace swarmfit
