// The tests' run of test particles through a recorded field (particles.hpp).
#pragma once

#include "swarmfit/nbody/engine.hpp"
#include "swarmfit/nbody/initial_conditions.hpp"
#include "swarmfit/nbody/particles.hpp"

namespace swarmfit::nbody {

// The giant planets' settings (AU, solar masses, years) for the belt tests, and the particles'
// rules to go with them (removal at 1 and 1000 AU from the Sun).
inline NbodySettings giants_settings(int order) {
  NbodySettings s;
  s.order = order;
  s.eta = order == 6 ? 0.1 : 0.005;
  s.G = kSolarSystemG;
  s.max_step = 1.0;
  return s;
}
inline ParticleRules giants_rules(const NbodySettings& s) {
  ParticleRules rules;
  rules.eta = s.eta;
  rules.max_step = s.max_step;
  rules.r_min = 1.0;
  rules.r_max = 1000.0;
  return rules;
}

// The giant planets and a belt, the particles advanced through the planets' recorded field,
// `chunk` years at a time, on `backend`: the particles at `years`.
inline Particles tape_run(const Bodies& start, const NbodySettings& s, double years, double chunk,
                          ParticleBackend& backend, const ParticleRules& rules) {
  BlockHermite all(start, s, make_cpu_backend());
  all.initialise();
  Particles p = Particles::from(all.bodies());
  BlockHermite planets(massive_only(all.bodies()), s, make_cpu_backend(1));
  planets.resume();
  advance_with_tape(planets, p, backend, years, chunk, rules);
  return p;
}

}  // namespace swarmfit::nbody
