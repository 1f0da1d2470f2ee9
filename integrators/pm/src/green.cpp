#include "swarmfit/pm/green.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>

namespace swarmfit::pm {

namespace {

// A real m^3 array's r2c transform (FFTW_ESTIMATE: the same plan, the same numbers, every run).
std::vector<std::array<double, 2>> transform(int m, std::vector<double>& g) {
  std::vector<std::array<double, 2>> out(static_cast<std::size_t>(m) * m * (m / 2 + 1));
  fftw_plan plan = fftw_plan_dft_r2c_3d(m, m, m, g.data(), reinterpret_cast<fftw_complex*>(out.data()), FFTW_ESTIMATE);
  fftw_execute(plan);
  fftw_destroy_plan(plan);
  return out;
}

}  // namespace

int fft_side(const PmSettings& s) { return s.boundary == Boundary::isolated ? 2 * s.mesh : s.mesh; }

std::vector<double> green_multiplier(const PmSettings& s) {
  const int m = fft_side(s), half = m / 2 + 1;
  const double h = s.cell();
  const double norm = 1.0 / (static_cast<double>(m) * m * m);
  auto freq = [m](int i) { return i <= m / 2 ? i : i - m; };
  const int p = stencil_width(s.assignment);
  auto deconvolution = [&](int a, int b, int c) {
    if (!s.deconvolve) return 1.0;
    const double w = window(freq(a), m, p) * window(freq(b), m, p) * window(c, m, p);
    return 1.0 / (w * w);
  };
  std::vector<double> green(static_cast<std::size_t>(m) * m * half);
  if (s.boundary == Boundary::periodic) {
    for (int a = 0; a < m; ++a)
      for (int b = 0; b < m; ++b)
        for (int c = 0; c < half; ++c) {
          const std::size_t k = (static_cast<std::size_t>(a) * m + b) * half + c;
          const double lambda = discrete_laplacian(freq(a), freq(b), c, m, h);
          green[k] = lambda == 0 ? 0.0 : 4.0 * M_PI * s.G / lambda * norm * deconvolution(a, b, c);
        }
    return green;
  }
  std::vector<double> g(static_cast<std::size_t>(m) * m * m);
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < m; ++b)
      for (int c = 0; c < m; ++c) {
        const double x = std::min(a, m - a), y = std::min(b, m - b), z = std::min(c, m - c);
        const double r = std::sqrt(x * x + y * y + z * z);
        g[(static_cast<std::size_t>(a) * m + b) * m + c] =
            -s.G / h * (r == 0 ? kMeanInverseDistanceInUnitCube : 1.0 / r);
      }
  const auto gk = transform(m, g);  // real and even: a real transform
  const double volume = h * h * h;
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < m; ++b)
      for (int c = 0; c < half; ++c) {
        const std::size_t k = (static_cast<std::size_t>(a) * m + b) * half + c;
        green[k] = gk[k][0] * volume * norm * deconvolution(a, b, c);
      }
  return green;
}

std::array<std::vector<double>, 3> force_kernel_multipliers(const PmSettings& s) {
  const int m = fft_side(s);
  const double h = s.cell(), norm = 1.0 / (static_cast<double>(m) * m * m), volume = h * h * h;
  auto offset = [m](int i) { return i < m / 2 ? i : (i == m / 2 ? 0 : i - m); };
  std::array<std::vector<double>, 3> out;
  std::vector<double> g(static_cast<std::size_t>(m) * m * m);
  for (int d = 0; d < 3; ++d) {
    for (int a = 0; a < m; ++a)
      for (int b = 0; b < m; ++b)
        for (int c = 0; c < m; ++c) {
          const int o[3] = {offset(a), offset(b), offset(c)};
          const bool nyquist = (d == 0 ? a : d == 1 ? b : c) == m / 2;
          const double r2 =
              static_cast<double>(o[0]) * o[0] + static_cast<double>(o[1]) * o[1] + static_cast<double>(o[2]) * o[2];
          // The acceleration at offset r from a unit mass: -G r / |r|^3 (toward it: minus).
          g[(static_cast<std::size_t>(a) * m + b) * m + c] =
              r2 == 0 || nyquist ? 0.0 : -s.G * o[d] / (r2 * std::sqrt(r2) * h * h);
        }
    const auto gk = transform(m, g);
    out[d].resize(gk.size());
    for (std::size_t k = 0; k < gk.size(); ++k) out[d][k] = gk[k][1] * volume * norm;
  }
  return out;
}

}  // namespace swarmfit::pm
