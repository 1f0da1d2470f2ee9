// The functions a reproducible run computes with +, -, *, / only (lanes.hpp: portable_log,
// portable_log1p, inverse_fifth_root), so that the CPU and the GPU round them alike: against the C
// library (long double where double's own function is not accurate enough to judge them).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "swarmfit/integrators/lanes.hpp"

namespace swarmfit {
namespace {

constexpr double kUlp = 2.220446049250313e-16;

TEST(Lanes, PortableLogIsWithinTwoUlpOfTheLibrarys) {
  std::mt19937_64 rng(20261125);
  std::uniform_real_distribution<double> exponent(-307.0, 308.0), near_one(-1e-6, 1e-6);
  double worst = 0.0;
  for (int k = 0; k < 400000; ++k) {
    const double x = k % 2 ? std::pow(10.0, exponent(rng)) : 1.0 + near_one(rng) * std::pow(10.0, -(k % 10));
    const long double exact = std::log(static_cast<long double>(x));
    const double error =
        std::fabs(static_cast<double>(portable_log(x) - exact)) / std::fabs(static_cast<double>(exact));
    worst = std::max(worst, exact == 0 ? 0.0 : error);
  }
  EXPECT_LE(worst, 2.0 * kUlp);
  EXPECT_EQ(portable_log(1.0), 0.0);
  EXPECT_EQ(portable_log(0.0), -HUGE_VAL);
  EXPECT_EQ(portable_log(HUGE_VAL), HUGE_VAL);
  EXPECT_TRUE(std::isnan(portable_log(-1.0)));
  EXPECT_TRUE(std::isnan(portable_log(NAN)));
  EXPECT_NEAR(portable_log(4.9406564584124654e-324), std::log(4.9406564584124654e-324), 1e-13);  // subnormal
}

TEST(Lanes, PortableLog1pKeepsTheDigitsOfSmallArguments) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-20.0, 3.0), fraction(-0.9, 0.0);
  double worst = 0.0;
  for (int k = 0; k < 200000; ++k) {
    const double x = k % 3 ? std::pow(10.0, exponent(rng)) : fraction(rng);
    const long double exact = std::log1p(static_cast<long double>(x));
    worst = std::max(worst, std::fabs(static_cast<double>((portable_log1p(x) - exact) / exact)));
  }
  EXPECT_LE(worst, 4.0 * kUlp);
  EXPECT_EQ(portable_log1p(0.0), 0.0);
  EXPECT_EQ(portable_log1p(1e-300), 1e-300);
}

TEST(Lanes, InverseFifthRootIsCorrectToAFewUlp) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> exponent(-300.0, 300.0);
  double worst = 0.0;
  for (int k = 0; k < 200000; ++k) {
    const double x = std::pow(10.0, exponent(rng));
    const long double exact = std::pow(static_cast<long double>(x), -1.0L / 5.0L);
    worst = std::max(worst, std::fabs(static_cast<double>((inverse_fifth_root(x) - exact) / exact)));
  }
  EXPECT_LE(worst, 2.0 * kUlp);
  EXPECT_EQ(inverse_fifth_root(32.0), 0.5);
  EXPECT_EQ(inverse_fifth_root(1.0), 1.0);
  EXPECT_EQ(inverse_fifth_root(std::ldexp(1.0, -100)), std::ldexp(1.0, 20));
  // A SIMD pack gives each lane's scalar result.
  Pack<4> p;
  for (int i = 0; i < 4; ++i) p.v[i] = std::pow(10.0, exponent(rng));
  const Pack<4> r = inverse_fifth_root(p);
  for (int i = 0; i < 4; ++i) {
    const double a = r.v[i], b = inverse_fifth_root(p.v[i]);
    EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0);
  }
}

}  // namespace
}  // namespace swarmfit
