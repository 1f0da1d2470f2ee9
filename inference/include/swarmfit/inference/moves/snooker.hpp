// The DE-snooker move (ter Braak & Vrugt 2008, Stat. Comput. 18, 435, eq. 3): z, z1, z2 distinct
// members of the other half; x moves along the line x - z by gamma_s times the difference of the
// projections of z1 and z2 onto it, gamma_s ~ U(1.2, 2.2). The acceptance ratio carries the factor
// (|x* - z| / |x - z|)^(d-1) (their eq. 4), which propose() returns as a log.
#pragma once

#include <Eigen/Dense>
#include <cstdint>

#include "swarmfit/inference/moves/half_update.hpp"

namespace swarmfit {

struct SnookerSettings {
  double probability = 0.0;  // that a walker's move is a snooker move
};

class SnookerMove {
 public:
  // Throws std::invalid_argument unless the probability is in [0, 1].
  explicit SnookerMove(SnookerSettings settings = {});
  const SnookerSettings& settings() const { return settings_; }

  // The proposal of walker `walker` (its stream index) at x; returns the log of the Hastings factor.
  // Needs 3 walkers per half.
  double propose(const HalfUpdate& half, std::uint64_t walker, const Eigen::Ref<const Eigen::VectorXd>& x,
                 Eigen::Ref<Eigen::VectorXd> proposal) const;

 private:
  SnookerSettings settings_;
};

}  // namespace swarmfit
