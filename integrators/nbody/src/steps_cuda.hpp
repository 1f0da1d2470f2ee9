// The device's predictor and corrector of the active bodies (steps_cuda.cu, built with
// -fmad=false so that they round as the host's, built with -ffp-contract=off): launched by the
// CUDA force backend on the default stream. Fields: body j's field f (x v a j s c, 3 each) at
// fields[f * n + j].
#pragma once

#include "swarmfit/nbody/hermite.hpp"

namespace swarmfit::nbody::device {

// Body j's state in the fields' layout, and back.
SWARMFIT_HD BodyState load_fields(const double* fields, long n, long j) {
  BodyState b;
  for (int d = 0; d < 3; ++d) {
    b.x[d] = fields[(0 + d) * n + j];
    b.v[d] = fields[(3 + d) * n + j];
    b.a[d] = fields[(6 + d) * n + j];
    b.j[d] = fields[(9 + d) * n + j];
    b.s[d] = fields[(12 + d) * n + j];
    b.c[d] = fields[(15 + d) * n + j];
  }
  return b;
}
SWARMFIT_HD void store_fields(double* fields, long n, long j, const BodyState& b) {
  for (int d = 0; d < 3; ++d) {
    fields[(0 + d) * n + j] = b.x[d];
    fields[(3 + d) * n + j] = b.v[d];
    fields[(6 + d) * n + j] = b.a[d];
    fields[(9 + d) * n + j] = b.j[d];
    fields[(12 + d) * n + j] = b.s[d];
    fields[(15 + d) * n + j] = b.c[d];
  }
}

// ibody[k * 12 + f] = body index[k] predicted to t: x v a, and zeros for the jerk's place.
void predict_active(const double* fields, const double* time, long n, const int* index, int count, double t,
                    double* ibody);

// Each body index[k] corrected to t with the forces sums[k * width ...] (hermite.hpp, correct);
// its fields and time updated, its wanted next step in wanted[k] and its next block step
// (quantise_step) in next_step[k].
void correct_active(int order, double* fields, double* time, long n, const int* index, int count, double t,
                    const double* sums, double eta, double max_step, double* wanted, double* next_step);

}  // namespace swarmfit::nbody::device
