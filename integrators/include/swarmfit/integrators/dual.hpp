// Tangent lanes: Dual<T> carries a value and its derivative along one direction of phase space
// (forward-mode automatic differentiation, Griewank & Walther 2008, "Evaluating Derivatives",
// ch. 3). A scheme's step run on Dual lanes is the step on the values, bitwise as on T, and its
// exact tangent map on the derivatives: the variational equations of the map itself, as REBOUND's
// WHFast variational particles (Rein & Tamayo 2016, MNRAS 459, 2275), for every scheme of the list
// without writing any tangent map by hand. Branches (a mask from a comparison, the Kepler solver's
// convergence test, the whole periods it removes) look at the values only, which is how the
// tangent map of a piecewise-smooth map is defined. T is any lane type (lanes.hpp): double on the
// GPU, Pack<W> on the CPU, so the tangent runs in the same SIMD lanes as the state.
#pragma once

#include <type_traits>

#include "swarmfit/integrators/lanes.hpp"

namespace swarmfit {

template <class T>
struct Dual {
  T v;  // value
  T d;  // derivative along the tangent direction
  Dual() = default;
  SWARMFIT_HD Dual(double x) : v(x), d(0.0) {}  // NOLINT: constants enter the arithmetic as in T
  SWARMFIT_HD Dual(T x, T dx) : v(x), d(dx) {}
  template <class U = T, class = typename std::enable_if<!std::is_same<U, double>::value>::type>
  SWARMFIT_HD explicit Dual(T x) : v(x), d(0.0) {}
  SWARMFIT_HD Dual& operator+=(const Dual& o) { return *this = *this + o; }
  SWARMFIT_HD Dual& operator-=(const Dual& o) { return *this = *this - o; }
  SWARMFIT_HD Dual& operator*=(const Dual& o) { return *this = *this * o; }
  SWARMFIT_HD Dual& operator/=(const Dual& o) { return *this = *this / o; }

  friend SWARMFIT_HD Dual operator+(const Dual& a, const Dual& b) { return Dual(a.v + b.v, a.d + b.d); }
  friend SWARMFIT_HD Dual operator-(const Dual& a, const Dual& b) { return Dual(a.v - b.v, a.d - b.d); }
  friend SWARMFIT_HD Dual operator*(const Dual& a, const Dual& b) { return Dual(a.v * b.v, a.d * b.v + a.v * b.d); }
  friend SWARMFIT_HD Dual operator/(const Dual& a, const Dual& b) {
    const T q = a.v / b.v;
    return Dual(q, (a.d - q * b.d) / b.v);
  }
  friend SWARMFIT_HD Dual operator+(const Dual& a, double b) { return Dual(a.v + b, a.d); }
  friend SWARMFIT_HD Dual operator+(double a, const Dual& b) { return Dual(a + b.v, b.d); }
  friend SWARMFIT_HD Dual operator-(const Dual& a, double b) { return Dual(a.v - b, a.d); }
  friend SWARMFIT_HD Dual operator-(double a, const Dual& b) { return Dual(a - b.v, -b.d); }
  friend SWARMFIT_HD Dual operator*(const Dual& a, double b) { return Dual(a.v * b, a.d * b); }
  friend SWARMFIT_HD Dual operator*(double a, const Dual& b) { return Dual(a * b.v, a * b.d); }
  friend SWARMFIT_HD Dual operator/(const Dual& a, double b) { return Dual(a.v / b, a.d / b); }
  friend SWARMFIT_HD Dual operator/(double a, const Dual& b) {
    const T q = a / b.v;
    return Dual(q, -q * b.d / b.v);
  }
  friend SWARMFIT_HD Dual operator-(const Dual& a) { return Dual(-a.v, -a.d); }

#define SWARMFIT_DUAL_COMPARE(op)                                                               \
  friend SWARMFIT_HD MaskOf<T> operator op(const Dual& a, const Dual& b) { return a.v op b.v; } \
  friend SWARMFIT_HD MaskOf<T> operator op(const Dual& a, double b) { return a.v op b; }        \
  friend SWARMFIT_HD MaskOf<T> operator op(double a, const Dual& b) { return a op b.v; }
  SWARMFIT_DUAL_COMPARE(<)
  SWARMFIT_DUAL_COMPARE(<=)
  SWARMFIT_DUAL_COMPARE(>)
  SWARMFIT_DUAL_COMPARE(>=)
  SWARMFIT_DUAL_COMPARE(==)
  SWARMFIT_DUAL_COMPARE(!=)
#undef SWARMFIT_DUAL_COMPARE
};

template <class T>
struct LaneTraits<Dual<T>> {
  using L = LaneTraits<T>;
  using Mask = typename L::Mask;
  static constexpr int width = L::width;
  // Memory holds values only; a tangent is set by whoever owns it (the observer's record).
  SWARMFIT_HD static Dual<T> load(const double* p) { return Dual<T>(L::load(p), T(0.0)); }
  SWARMFIT_HD static void store(double* p, const Dual<T>& x) { L::store(p, x.v); }
  SWARMFIT_HD static double lane(const Dual<T>& x, int i) { return L::lane(x.v, i); }
  SWARMFIT_HD static bool mask_lane(Mask m, int i) { return L::mask_lane(m, i); }
  SWARMFIT_HD static void set_mask_lane(Mask& m, int i, bool x) { L::set_mask_lane(m, i, x); }
};

template <class T>
SWARMFIT_HD Dual<T> select(MaskOf<T> m, const Dual<T>& a, const Dual<T>& b) {
  return Dual<T>(select(m, a.v, b.v), select(m, a.d, b.d));
}
// a b + c rounded once in the value (the same bits as on T); the derivative a' b + a b' + c'.
template <class T>
SWARMFIT_HD Dual<T> lane_fma(const Dual<T>& a, const Dual<T>& b, const Dual<T>& c) {
  return Dual<T>(lane_fma(a.v, b.v, c.v), lane_fma(a.d, b.v, lane_fma(a.v, b.d, c.d)));
}
template <class T>
SWARMFIT_HD Dual<T> lane_sqrt(const Dual<T>& x) {
  const T s = lane_sqrt(x.v);
  return Dual<T>(s, 0.5 * x.d / s);
}
// d(x^-1/2) = -x^-3/2 dx / 2, from the value's own rsqrt.
template <class T>
SWARMFIT_HD Dual<T> lane_rsqrt(const Dual<T>& x) {
  const T r = lane_rsqrt(x.v);
  return Dual<T>(r, -0.5 * r * r * r * x.d);
}
template <class T>
SWARMFIT_HD Dual<T> lane_abs(const Dual<T>& x) {
  return select(x.v < 0.0, -x, x);
}
template <class T>
SWARMFIT_HD Dual<T> lane_min(const Dual<T>& a, const Dual<T>& b) {
  return select(a.v < b.v, a, b);
}
template <class T>
SWARMFIT_HD Dual<T> lane_max(const Dual<T>& a, const Dual<T>& b) {
  return select(a.v > b.v, a, b);
}
// x^(-1/5) (RKCK's step control): d = -x^(-6/5) dx / 5.
template <class T>
SWARMFIT_HD Dual<T> inverse_fifth_root(const Dual<T>& x) {
  const T r = inverse_fifth_root(x.v);
  return Dual<T>(r, -0.2 * r * x.d / x.v);
}
// Piecewise constant: derivative 0 (the Kepler solver's count of whole periods).
template <class T>
SWARMFIT_HD Dual<T> lane_floor(const Dual<T>& x) {
  return Dual<T>(lane_floor(x.v), T(0.0));
}
// The monitors' test of the state: the values. A tangent that overflows is rescaled by its owner.
template <class T>
SWARMFIT_HD MaskOf<T> lane_isfinite(const Dual<T>& x) {
  return lane_isfinite(x.v);
}

// `s` (a struct of Dual<T> members only, as Bodies and the schemes' Work are) with every derivative
// multiplied by `factor`: the tangent map is linear, so a rescaled tangent evolves into the
// rescaled image of the old one (renormalisation, Benettin et al. 1980). By value, so that only
// the copy's address is taken (on the GPU the caller's state stays in registers).
template <class S, class T>
SWARMFIT_HD S scaled_tangent(S s, T factor) {
  Dual<T>* x = reinterpret_cast<Dual<T>*>(&s);
  for (unsigned k = 0; k < sizeof(S) / sizeof(Dual<T>); ++k) x[k].d = x[k].d * factor;
  return s;
}

}  // namespace swarmfit
