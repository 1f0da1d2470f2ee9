// The Hermite correctors on their own, on motions they must integrate exactly: the velocity
// corrector (Hut, Makino & McMillan 1995) is the two-point Hermite quadrature of a(t) with the
// jerks, exact for a cubic a(t); the position corrector of hermite_adaptive, with the jerks as
// well (Kokubo & Makino 2004), is exact for a quintic v(t), where the fixed-step scheme's
// h^2/12 form is exact only for a cubic v(t). So on a quintic x(t) (a quartic v, a cubic a) both
// the velocity and the position come out exact to round-off with the modified corrector, and the
// position does not with the plain one.
#include <gtest/gtest.h>

#include <cmath>

#include "swarmfit/integrators/hermite.hpp"

namespace swarmfit {
namespace {

// x(t) = sum_k c_k t^k per component, k = 0..5 (a cubic acceleration), and its derivatives.
struct Quintic {
  double c[3][6];
  double derivative(int d, int order, double t) const {
    double s = 0.0;
    for (int k = order; k < 6; ++k) {
      double f = 1.0;
      for (int m = 0; m < order; ++m) f *= k - m;
      s += f * c[d][k] * std::pow(t, k - order);
    }
    return s;
  }
  void state(double t, double (&x)[3], double (&v)[3], double (&a)[3], double (&j)[3]) const {
    for (int d = 0; d < 3; ++d) {
      x[d] = derivative(d, 0, t);
      v[d] = derivative(d, 1, t);
      a[d] = derivative(d, 2, t);
      j[d] = derivative(d, 3, t);
    }
  }
};

// Error of one corrector step of length h from t = 0 on x(t) (the coordinates are of order 1).
void step_errors(const Quintic& q, double h, bool modified, double& x_error, double& v_error) {
  double x0[3], v0[3], a0[3], j0[3], x1[3], v1[3], a1[3], j1[3];
  q.state(0.0, x0, v0, a0, j0);
  q.state(h, x1, v1, a1, j1);
  double x[3], v[3];
  if (modified) {
    const double zero[3] = {0.0, 0.0, 0.0};
    double cx[3], cv[3];
    hermite_correct_compensated(x0, v0, a0, j0, a1, j1, 0.5 * h, h / 6.0, zero, zero, x, v, cx, cv);
  } else {
    hermite_correct(x0, v0, a0, j0, a1, j1, 0.5 * h, h / 6.0, x, v);
  }
  x_error = v_error = 0.0;
  for (int d = 0; d < 3; ++d) {
    x_error = std::max(x_error, std::fabs(x[d] - x1[d]));
    v_error = std::max(v_error, std::fabs(v[d] - v1[d]));
  }
}

const Quintic kMotion = {
    {{1.0, 0.7, -0.4, 0.3, -0.2, 0.15}, {-0.5, 1.1, 0.25, -0.35, 0.1, -0.12}, {0.3, -0.2, 0.6, 0.05, -0.3, 0.2}}};

TEST(HermiteCorrector, ModifiedPositionCorrectorIsExactForAQuinticMotion) {
  double x_error, v_error;
  step_errors(kMotion, 0.5, true, x_error, v_error);
  // Round-off of sums of O(1) terms: measured 5.6e-17 (x and v); the plain corrector's x: 1.0e-3.
  EXPECT_LT(x_error, 2e-15);
  EXPECT_LT(v_error, 2e-15);
}

TEST(HermiteCorrector, PlainPositionCorrectorIsNotAndErrsAtFifthOrder) {
  // The h^2/12 form integrates v's quartic term 5 c_5 t^4 to h^5 / 6 instead of h^5 / 5: an error
  // of order h^5, which falls 32x when h halves; its velocity stays exact. So the test above
  // fails for the plain corrector.
  double x_coarse, v_coarse, x_fine, v_fine;
  step_errors(kMotion, 0.5, false, x_coarse, v_coarse);
  step_errors(kMotion, 0.25, false, x_fine, v_fine);
  EXPECT_GT(x_coarse, 1e-4);  // measured 1.04e-3, and 3.3e-5 at h = 0.25 (log2 ratio 4.99)
  EXPECT_NEAR(std::log2(x_coarse / x_fine), 5.0, 0.3);
  EXPECT_LT(v_coarse, 2e-15);
}

}  // namespace
}  // namespace swarmfit
