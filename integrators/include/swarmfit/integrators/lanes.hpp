// Lane arithmetic: the physics is written once for a "lane type" T that is either
//  - double (one system; the CUDA backend and the scalar reference), or
//  - Pack<W> (W systems side by side in one SIMD register; the CPU backend).
// Branches become masks: select(mask, a, b), any(mask); a lane's result never depends on its
// neighbours, so M copies of a system give bitwise the result of one (design/STYLE.md habit 6).
#pragma once

#include <cmath>
#include <cstring>
#if !defined(__CUDACC__)
#include <immintrin.h>
#endif

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
// which keeps them within 1e-12 after 1000 steps (tests/integrators/test_gpu.cpp). The GPU's
// reproducible kernels (SWARMFIT_STRICT_FP, RunRequest::reproducible) divide as the CPU does.
SWARMFIT_HD double lane_rsqrt(double x) {
#if defined(__CUDA_ARCH__) && !SWARMFIT_STRICT_FP
  return rsqrt(x);
#else
  return 1.0 / sqrt(x);
#endif
}
SWARMFIT_HD double lane_abs(double x) { return fabs(x); }
// The SIMD packs' min and max are vminpd and vmaxpd, a < b ? a : b and a > b ? a : b, which pass a
// NaN in b on (fmin and fmax drop it); the reproducible kernels take the packs' definition, so that
// a NaN meets the same fate on the CPU and the GPU (RunRequest::reproducible).
#if SWARMFIT_STRICT_FP
SWARMFIT_HD double lane_min(double a, double b) { return a < b ? a : b; }
SWARMFIT_HD double lane_max(double a, double b) { return a > b ? a : b; }
#else
SWARMFIT_HD double lane_min(double a, double b) { return fmin(a, b); }
SWARMFIT_HD double lane_max(double a, double b) { return fmax(a, b); }
#endif
SWARMFIT_HD double lane_floor(double x) { return floor(x); }
// True where x is neither NaN nor infinite (x - x is 0 only for finite x).
SWARMFIT_HD bool lane_isfinite(double x) { return (x - x) == 0.0; }

// Functions the CPU's libm and CUDA's round differently (by an ulp, now and then), written with
// +, -, *, / and frexp/ldexp only, which both round alike (IEEE 754): what a reproducible run
// computes with them is bitwise the same on the CPU and the GPU (RunRequest::reproducible).
//
// ln x to ~2 ulp: x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s), s = (m - 1) / (m + 1),
// |s| <= 0.172, as an odd series to s^25 (Abramowitz & Stegun 4.1.27); e ln 2 with ln 2 split in
// a part whose product with e is exact and a remainder (Cody & Waite 1980).
SWARMFIT_HD double portable_log(double x) {
  if (!(x > 0.0)) return x == 0.0 ? -HUGE_VAL : NAN;
  if (x == HUGE_VAL) return x;
  int e;
  double m = frexp(x, &e);  // [0.5, 1)
  if (m < 0.70710678118654752440) {
    m = 2.0 * m;
    e -= 1;
  }
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  double series = 1.0 / 25.0;
  for (int k = 11; k >= 0; --k) series = series * s2 + 1.0 / (2 * k + 1);
  const double ln2_hi = 0.693145751953125, ln2_lo = 1.42860682030941723212e-6;  // ln2_hi: 16 bits
  return e * ln2_hi + (e * ln2_lo + 2.0 * s * series);
}
// ln(1 + x) without losing x's digits: u = 1 + x rounded, ln(u) x / (u - 1) (Goldberg 1991,
// "What every computer scientist should know about floating-point arithmetic", Theorem 4).
SWARMFIT_HD double portable_log1p(double x) {
  const double u = 1.0 + x;
  if (u == 1.0) return x;
  return portable_log(u) * (x / (u - 1.0));
}
// x^(-1/5) for finite x > 0 to ~1 ulp: x = m 2^(5q + r), m in [0.5, 1), 0 <= r < 5; Newton on
// z^-5 = m 2^r from a linear first guess, then 2^-q. (The RKCK step control's err^(-1/5).)
SWARMFIT_HD double inverse_fifth_root(double x) {
  int e;
  double m = frexp(x, &e);
  int q = e >= 0 ? e / 5 : -((-e + 4) / 5);
  m = ldexp(m, e - 5 * q);    // [0.5, 16)
  double z = 1.1 - 0.04 * m;  // within 25% of m^(-1/5) on [0.5, 16): 8 steps converge
  for (int k = 0; k < 8; ++k) {
    const double z2 = z * z;
    z = z + 0.2 * z * (1.0 - m * (z2 * z2 * z));
  }
  return ldexp(z, -q);
}

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
// any/all as one vector test where the target has one (vptestmq, vptest): g++ reduced the lanes
// with a chain of ors and extracts, and the loops test a mask every step.
template <int W>
inline bool any(PackMask<W> m) {
#if defined(__AVX512F__)
  if constexpr (W == 8) return _mm512_test_epi64_mask(__m512i(m.m), __m512i(m.m)) != 0;
#endif
#if defined(__AVX__)
  if constexpr (W == 4) return !_mm256_testz_si256(__m256i(m.m), __m256i(m.m));
#endif
#if defined(__SSE4_1__)
  if constexpr (W == 2) return !_mm_testz_si128(__m128i(m.m), __m128i(m.m));
#endif
  long long r = 0;
  for (int i = 0; i < W; ++i) r |= m.m[i];
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
template <int W>
inline bool all(PackMask<W> m) {
  // Mask lanes are 0 or all ones: all set <=> none clear.
  return !any(mask_not(m));
}

// Lane-wise maths. Each loop is over a compile-time width and vectorises (vsqrtpd, vrndscalepd);
// inverse_fifth_root is per lane but used once per step.
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
// Rounded once, as the scalar fma(): one vfmadd per pack where the target has FMA (the CPU code is
// built without automatic contraction, -ffp-contract=off, so explicit FMAs are the only ones; the
// intrinsic, because g++ left a per-lane loop of fma() scalar inside large functions), else a
// fused multiply-add per lane. Either way a pack gives bitwise the result of one system alone.
template <int W>
inline Pack<W> lane_fma(Pack<W> a, Pack<W> b, Pack<W> c) {
#if defined(__AVX512F__)
  if constexpr (W == 8) return Pack<W>(typename Pack<W>::V(_mm512_fmadd_pd(a.v, b.v, c.v)));
#endif
#if defined(__FMA__)
  if constexpr (W == 4) return Pack<W>(typename Pack<W>::V(_mm256_fmadd_pd(a.v, b.v, c.v)));
  if constexpr (W == 2) return Pack<W>(typename Pack<W>::V(_mm_fmadd_pd(a.v, b.v, c.v)));
#endif
  Pack<W> r;
  for (int i = 0; i < W; ++i) r.v[i] = __builtin_fma(a.v[i], b.v[i], c.v[i]);
  return r;
}
SWARMFIT_PACK_UNARY(lane_sqrt, __builtin_sqrt(x))
SWARMFIT_PACK_UNARY(lane_abs, __builtin_fabs(x))
SWARMFIT_PACK_UNARY(lane_floor, __builtin_floor(x))
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
inline Pack<W> inverse_fifth_root(Pack<W> a) {
  Pack<W> r;
  for (int i = 0; i < W; ++i) r.v[i] = inverse_fifth_root(a.v[i]);
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

// The CPU backend's SIMD width: the packs it runs systems in.
#if defined(__AVX512F__)
constexpr int kSimdWidth = 8;
#elif defined(__AVX__)
constexpr int kSimdWidth = 4;
#else
constexpr int kSimdWidth = 2;
#endif

}  // namespace swarmfit
