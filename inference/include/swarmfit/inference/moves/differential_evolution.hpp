// The differential-evolution move (ter Braak 2006, Stat. Comput. 16, 239, eq. 2): walker x proposes
// x + gamma (x_a - x_b) + e, with a != b two members of the other half, gamma = 2.38 / sqrt(2 d)
// (and 1 every `gamma_one_every` generations, to jump between modes) and e ~ N(0, (jitter s_p)^2),
// s_p the other half's spread of parameter p. Symmetric: no Hastings correction.
#pragma once

#include <Eigen/Dense>
#include <cstdint>

#include "swarmfit/inference/moves/half_update.hpp"

namespace swarmfit {

struct DifferentialEvolutionSettings {
  double gamma_scale = 2.38;  // gamma = gamma_scale / sqrt(2 d)
  int gamma_one_every = 10;   // every this many generations gamma = 1 (0: never)
  double jitter = 1e-6;       // e ~ N(0, (jitter * scale_k)^2) per parameter, scale from the other half's spread
};

class DifferentialEvolutionMove {
 public:
  explicit DifferentialEvolutionMove(DifferentialEvolutionSettings settings = {}) : settings_(settings) {}
  const DifferentialEvolutionSettings& settings() const { return settings_; }

  // Before a half update of one temperature: this generation's gamma and the other half's spread.
  void prepare(const HalfUpdate& half);
  // The proposal of walker `walker` (its stream index) at x.
  void propose(const HalfUpdate& half, std::uint64_t walker, const Eigen::Ref<const Eigen::VectorXd>& x,
               Eigen::Ref<Eigen::VectorXd> proposal) const;

 private:
  DifferentialEvolutionSettings settings_;
  double gamma_ = 0;
  Eigen::VectorXd spread_;
};

}  // namespace swarmfit
