// Lane arithmetic: the physics is written once for a "lane type" T that is either
//  - double (one system; the CUDA backend and the scalar reference), or
//  - Pack<W> (W systems side by side in one SIMD register; the CPU backend).
// Branches become masks: select(mask, a, b), any(mask); a lane's result never depends on its
// neighbours, so M copies of a system give bitwise the result of one (design/STYLE.md habit 6).
#pragma once

#include <cmath>
#include <cstring>

#include "swarmfit/integrators/portability.hpp"

namespace swarmfit {

// ---------------------------------------------------------------- scalar lanes (host + device)
SWARMFIT_HD double select(bool mask, double a, double b) { return mask ? a : b; }
SWARMFIT_HD bool select(bool mask, bool a, bool b) { return mask ? a : b; }
SWARMFIT_HD bool any(bool mask) { return mask; }
SWARMFIT_HD bool all(bool mask) { return mask; }
SWARMFIT_HD bool mask_and(bool a, bool b) { return a && b; }
SWARMFIT_HD bool mask_or(bool a, bool b) { return a || b; }
SWARMFIT_HD bool mask_not(bool a) { return !a; }
SWARMFIT_HD double lane_sqrt(double x) { return sqrt(x); }
// a * b + c rounded once. Written out where the rounding must not depend on the compiler: nvcc
// leaves a product and a sum it did not fuse to ptxas, which fuses them or not depending on the
// kernel around them (the thread-per-body and thread-per-system kernels must agree bitwise).
SWARMFIT_HD double lane_fma(double a, double b, double c) { return fma(a, b, c); }
// 1/sqrt(x): the GPU's rsqrt (within 1 ulp, one instruction sequence instead of an IEEE square
// root and division); the CPU divides. CPU and GPU then differ at the last bit per force term,
// which keeps them within 1e-12 after 1000 steps (tests/integrators/test_gpu.cpp).
// (The correctly rounded 1.0 / sqrt(x) on the GPU as well does not bring the CPU and GPU
// likelihoods closer: bench/RESULTS.md, "CPU and GPU likelihoods".)
SWARMFIT_HD double lane_rsqrt(double x) {
#if defined(__CUDA_ARCH__)
  return rsqrt(x);
#else
  return 1.0 / sqrt(x);
#endif
}
SWARMFIT_HD double lane_abs(double x) { return fabs(x); }
SWARMFIT_HD double lane_min(double a, double b) { return fmin(a, b); }
SWARMFIT_HD double lane_max(double a, double b) { return fmax(a, b); }
SWARMFIT_HD double lane_floor(double x) { return floor(x); }
SWARMFIT_HD double lane_pow(double x, double y) { return pow(x, y); }
SWARMFIT_HD double lane_cbrt(double x) { return cbrt(x); }
// True where x is neither NaN nor infinite (x - x is 0 only for finite x).
SWARMFIT_HD bool lane_isfinite(double x) { return (x - x) == 0.0; }

template <class T>
struct LaneTraits;
template <>
struct LaneTraits<double> {
  using Mask = bool;
  static constexpr int width = 1;
  SWARMFIT_HD static double load(const double* p) { return *p; }
  SWARMFIT_HD static void store(double* p, double v) { *p = v; }
  SWARMFIT_HD static double lane(double v, int) { return v; }
  SWARMFIT_HD static void set_lane(double& v, int, double x) { v = x; }
  SWARMFIT_HD static bool mask_lane(bool m, int) { return m; }
  SWARMFIT_HD static void set_mask_lane(bool& m, int, bool x) { m = x; }
};

#if !defined(__CUDACC__)
// ---------------------------------------------------------------- SIMD packs (host only)
// A thin wrapper over GCC vector extensions: every operator is one vector instruction.
// GCC does not apply vector_size to a dependent typedef, so the vector types are spelled per width.
typedef double VecD2 __attribute__((vector_size(16)));
typedef double VecD4 __attribute__((vector_size(32)));
typedef double VecD8 __attribute__((vector_size(64)));
typedef long long VecL2 __attribute__((vector_size(16)));
typedef long long VecL4 __attribute__((vector_size(32)));
typedef long long VecL8 __attribute__((vector_size(64)));
template <int W>
struct VectorTypes;
template <>
struct VectorTypes<2> {
  using D = VecD2;
  using L = VecL2;
};
template <>
struct VectorTypes<4> {
  using D = VecD4;
  using L = VecL4;
};
template <>
struct VectorTypes<8> {
  using D = VecD8;
  using L = VecL8;
};

template <int W>
struct PackMask {
  using V = typename VectorTypes<W>::L;
  V m;
  PackMask() = default;
  explicit PackMask(bool b) : m(V{} + (b ? -1LL : 0LL)) {}
  PackMask(V x) : m(x) {}  // NOLINT
};

template <int W>
struct Pack {
  using V = typename VectorTypes<W>::D;
  V v;
  Pack() = default;
  Pack(double s) : v(V{} + s) {}  // NOLINT: broadcasting is the point
  explicit Pack(V x) : v(x) {}
  Pack& operator+=(Pack o) {
    v += o.v;
    return *this;
  }
  Pack& operator-=(Pack o) {
    v -= o.v;
    return *this;
  }
  Pack& operator*=(Pack o) {
    v *= o.v;
    return *this;
  }
  Pack& operator/=(Pack o) {
    v /= o.v;
    return *this;
  }
};

template <int W>
inline Pack<W> operator+(Pack<W> a, Pack<W> b) {
  return Pack<W>(a.v + b.v);
}
template <int W>
inline Pack<W> operator-(Pack<W> a, Pack<W> b) {
  return Pack<W>(a.v - b.v);
}
template <int W>
inline Pack<W> operator*(Pack<W> a, Pack<W> b) {
  return Pack<W>(a.v * b.v);
}
template <int W>
inline Pack<W> operator/(Pack<W> a, Pack<W> b) {
  return Pack<W>(a.v / b.v);
}
template <int W>
inline Pack<W> operator+(Pack<W> a, double b) {
  return Pack<W>(a.v + b);
}
template <int W>
inline Pack<W> operator-(Pack<W> a, double b) {
  return Pack<W>(a.v - b);
}
template <int W>
inline Pack<W> operator*(Pack<W> a, double b) {
  return Pack<W>(a.v * b);
}
template <int W>
inline Pack<W> operator/(Pack<W> a, double b) {
  return Pack<W>(a.v / b);
}
template <int W>
inline Pack<W> operator+(double a, Pack<W> b) {
  return Pack<W>(a + b.v);
}
template <int W>
inline Pack<W> operator-(double a, Pack<W> b) {
  return Pack<W>(a - b.v);
}
template <int W>
inline Pack<W> operator*(double a, Pack<W> b) {
  return Pack<W>(a * b.v);
}
template <int W>
inline Pack<W> operator/(double a, Pack<W> b) {
  return Pack<W>(a / b.v);
}
template <int W>
inline Pack<W> operator-(Pack<W> a) {
  return Pack<W>(-a.v);
}

#define SWARMFIT_PACK_COMPARE(op)                           \
  template <int W>                                          \
  inline PackMask<W> operator op(Pack<W> a, Pack<W> b) {    \
    return PackMask<W>(a.v op b.v);                         \
  }                                                         \
  template <int W>                                          \
  inline PackMask<W> operator op(Pack<W> a, double b) {     \
    return PackMask<W>(a.v op(typename Pack<W>::V{} + b));  \
  }                                                         \
  template <int W>                                          \
  inline PackMask<W> operator op(double a, Pack<W> b) {     \
    return PackMask<W>((typename Pack<W>::V{} + a) op b.v); \
  }
SWARMFIT_PACK_COMPARE(<)
SWARMFIT_PACK_COMPARE(<=)
SWARMFIT_PACK_COMPARE(>)
SWARMFIT_PACK_COMPARE(>=)
SWARMFIT_PACK_COMPARE(==)
SWARMFIT_PACK_COMPARE(!=)
#undef SWARMFIT_PACK_COMPARE

template <int W>
inline Pack<W> select(PackMask<W> m, Pack<W> a, Pack<W> b) {
  return Pack<W>(m.m ? a.v : b.v);
}
template <int W>
inline PackMask<W> select(PackMask<W> m, PackMask<W> a, PackMask<W> b) {
  return PackMask<W>(m.m ? a.m : b.m);
}
template <int W>
inline bool any(PackMask<W> m) {
  long long r = 0;
  for (int i = 0; i < W; ++i) r |= m.m[i];
  return r != 0;
}
template <int W>
inline bool all(PackMask<W> m) {
  long long r = -1;
  for (int i = 0; i < W; ++i) r &= m.m[i];
  return r != 0;
}
template <int W>
inline PackMask<W> mask_and(PackMask<W> a, PackMask<W> b) {
  return PackMask<W>(a.m & b.m);
}
template <int W>
inline PackMask<W> mask_or(PackMask<W> a, PackMask<W> b) {
  return PackMask<W>(a.m | b.m);
}
template <int W>
inline PackMask<W> mask_not(PackMask<W> a) {
  return PackMask<W>(~a.m);
}

// Lane-wise maths. Each loop is over a compile-time width and vectorises (vsqrtpd, vrndscalepd);
// pow and cbrt are per lane but only used once per step or once per run.
#define SWARMFIT_PACK_UNARY(name, expr) \
  template <int W>                      \
  inline Pack<W> name(Pack<W> a) {      \
    Pack<W> r;                          \
    for (int i = 0; i < W; ++i) {       \
      double x = a.v[i];                \
      r.v[i] = (expr);                  \
    }                                   \
    return r;                           \
  }
// Rounded once, as the scalar fma(): one vfmadd where the target has FMA (contraction); elsewhere
// (SWARMFIT_MARCH without FMA) a fused multiply-add per lane, so a pack still gives bitwise the
// result of one system alone.
template <int W>
inline Pack<W> lane_fma(Pack<W> a, Pack<W> b, Pack<W> c) {
#if defined(__FMA__)
  return Pack<W>(a.v * b.v + c.v);
#else
  Pack<W> r;
  for (int i = 0; i < W; ++i) r.v[i] = __builtin_fma(a.v[i], b.v[i], c.v[i]);
  return r;
#endif
}
SWARMFIT_PACK_UNARY(lane_sqrt, __builtin_sqrt(x))
SWARMFIT_PACK_UNARY(lane_abs, __builtin_fabs(x))
SWARMFIT_PACK_UNARY(lane_floor, __builtin_floor(x))
SWARMFIT_PACK_UNARY(lane_cbrt, std::cbrt(x))
#undef SWARMFIT_PACK_UNARY
template <int W>
inline Pack<W> lane_rsqrt(Pack<W> a) {
  return 1.0 / lane_sqrt(a);
}
template <int W>
inline Pack<W> lane_min(Pack<W> a, Pack<W> b) {
  return Pack<W>(a.v < b.v ? a.v : b.v);
}
template <int W>
inline Pack<W> lane_max(Pack<W> a, Pack<W> b) {
  return Pack<W>(a.v > b.v ? a.v : b.v);
}
template <int W>
inline Pack<W> lane_pow(Pack<W> a, double y) {
  Pack<W> r;
  for (int i = 0; i < W; ++i) r.v[i] = std::pow(a.v[i], y);
  return r;
}
template <int W>
inline PackMask<W> lane_isfinite(Pack<W> x) {
  return PackMask<W>((x.v - x.v) == 0.0);
}

template <int W>
struct LaneTraits<Pack<W>> {
  using Mask = PackMask<W>;
  static constexpr int width = W;
  static Pack<W> load(const double* p) {
    Pack<W> r;
    std::memcpy(&r.v, p, sizeof(r.v));
    return r;
  }
  static void store(double* p, Pack<W> v) { std::memcpy(p, &v.v, sizeof(v.v)); }
  static double lane(Pack<W> v, int i) { return v.v[i]; }
  static void set_lane(Pack<W>& v, int i, double x) { v.v[i] = x; }
  static bool mask_lane(PackMask<W> m, int i) { return m.m[i] != 0; }
  static void set_mask_lane(PackMask<W>& m, int i, bool x) { m.m[i] = x ? -1LL : 0LL; }
};
#endif  // !__CUDACC__

template <class T>
using MaskOf = typename LaneTraits<T>::Mask;

}  // namespace swarmfit
