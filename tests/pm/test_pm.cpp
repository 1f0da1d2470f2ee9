// The particle-mesh engine against exact answers: stencils, the Poisson solvers on a uniform
// sphere, a Plummer sphere and a plane wave, the two-particle force, momentum conservation, FFT
// against multigrid, the leapfrog keeping a Plummer sphere in equilibrium.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>

#include "swarmfit/pm/initial_conditions.hpp"
#include "swarmfit/pm/multigrid.hpp"
#include "swarmfit/pm/pm.hpp"

using namespace swarmfit::pm;

namespace {

// A particle set of the given positions (and masses).
template <class Real = double>
ParticleSet<Real> particles_at(const std::vector<std::array<double, 3>>& x, const std::vector<double>& m) {
  ParticleSet<Real> p;
  p.resize(static_cast<long>(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    for (int d = 0; d < 3; ++d) {
      p.x[d][i] = static_cast<Real>(x[i][d]);
      p.v[d][i] = 0;
    }
    p.mass[i] = static_cast<Real>(m[i]);
    p.id[i] = static_cast<long>(i);
    p.status[i] = 0;
  }
  return p;
}

PmSettings centred(int mesh, double box, Boundary b) {
  PmSettings s;
  s.mesh = mesh;
  s.box = box;
  for (double& o : s.origin) o = -box / 2;
  s.boundary = b;
  s.threads = 2;
  return s;
}

}  // namespace

TEST(PmStencil, WeightsSumToOneAndKeepTheCentreOfMass) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(2.0, 3.0);
  for (int trial = 0; trial < 1000; ++trial) {
    const double s = u(rng);
    int first[3];
    double w[3][3];
    stencil<Assignment::ngp>(s, first[0], w[0]);
    stencil<Assignment::cic>(s, first[1], w[1]);
    stencil<Assignment::tsc>(s, first[2], w[2]);
    EXPECT_EQ(first[0], 2);
    for (int a = 1; a < 3; ++a) {
      double sum = 0, centre = 0;
      for (int k = 0; k <= a; ++k) {
        sum += w[a][k];
        centre += w[a][k] * (first[a] + k + 0.5);  // the cell centres
      }
      EXPECT_NEAR(sum, 1.0, 1e-15);
      EXPECT_NEAR(centre, s, 1e-14) << "scheme " << a;  // CIC and TSC reproduce a linear field
    }
  }
}

// Poisson, isolated: a uniform sphere (one particle at every cell centre within R) against
// -G M (3 R^2 - r^2) / (2 R^3) inside and -G M / r outside.
TEST(PmPoisson, UniformSphereMatchesTheAnalyticPotential) {
  const int n = 64;
  PmSettings s = centred(n, 64.0, Boundary::isolated);  // h = 1
  s.assignment = Assignment::ngp;
  const double R = 12.0;
  std::vector<std::array<double, 3>> x;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) {
        const double c[3] = {i + 0.5 - n / 2.0, j + 0.5 - n / 2.0, k + 0.5 - n / 2.0};
        if (c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < R * R) x.push_back({c[0], c[1], c[2]});
      }
  const double M = static_cast<double>(x.size());  // unit mass a cell
  auto p = particles_at(x, std::vector<double>(x.size(), 1.0));
  auto f = make_cpu_mesh_forces<double>(s);
  std::vector<double> acc;
  f->accelerations(p, &acc, nullptr);
  const std::vector<double> phi = f->potential();
  const double Reff = std::cbrt(3.0 * M / (4.0 * M_PI));  // the sphere of the same volume
  double worst_in = 0, worst_out = 0;
  for (int i = 4; i < n - 4; i += 3)
    for (int j = 4; j < n - 4; j += 5)
      for (int k = 4; k < n - 4; k += 7) {
        const double c[3] = {i + 0.5 - n / 2.0, j + 0.5 - n / 2.0, k + 0.5 - n / 2.0};
        const double r = std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
        const double exact = r < Reff ? -M * (3 * Reff * Reff - r * r) / (2 * Reff * Reff * Reff) : -M / r;
        const double err = std::fabs(phi[(static_cast<std::size_t>(i) * n + j) * n + k] / exact - 1);
        if (r < Reff - 2)
          worst_in = std::max(worst_in, err);
        else if (r > Reff + 2)
          worst_out = std::max(worst_out, err);
      }
  EXPECT_LT(worst_in, 2e-3);   // inside: the discrete sphere's surface
  EXPECT_LT(worst_out, 1e-3);  // outside: -G M / r
}

// Poisson, isolated: a Plummer sphere of 2e5 particles against -G M / sqrt(r^2 + b^2).
TEST(PmPoisson, PlummerSphereMatchesTheAnalyticPotential) {
  PmSettings s = centred(64, 8.0, Boundary::isolated);
  s.assignment = Assignment::tsc;
  auto p = plummer<double>(200000, 11, 1.0, 1.0, 3.0);
  auto f = make_cpu_mesh_forces<double>(s);
  std::vector<double> pot;
  f->accelerations(p, nullptr, &pot);
  // The sphere truncated at r_t = 3 holds M_P(r_t) of the full one's unit mass, renormalised to 1:
  // inside, its potential is the full one's less that of the mass outside (a constant there,
  // phi_P(r_t) + M_P(r_t) / r_t), divided by M_P(r_t).
  const double b = 3 * M_PI / 16, rt = 3.0;
  auto full = [b](double r) { return -1.0 / std::sqrt(r * r + b * b); };
  const double kept = rt * rt * rt / std::pow(rt * rt + b * b, 1.5);
  double worst = 0;
  long compared = 0;
  for (long i = 0; i < p.size(); i += 97) {
    const double r = std::sqrt(p.x[0][i] * p.x[0][i] + p.x[1][i] * p.x[1][i] + p.x[2][i] * p.x[2][i]);
    if (r < 0.5 || r > 2.0 || p.status[i] != 0) continue;
    const double exact = (full(r) - full(rt) - kept / rt) / kept;
    worst = std::max(worst, std::fabs(pot[i] / exact - 1));
    ++compared;
  }
  EXPECT_GT(compared, 500);
  EXPECT_LT(worst, 0.02);  // particle noise (2e5) and the mesh (h = 0.125 = b / 4.7)
}

// The plane-wave test: a lattice (a particle a cell) displaced by A sin(2 pi x / L) along x has
// the density contrast -d(dx)/dx, and Poisson gives the acceleration 4 pi G rho_bar dx exactly
// in linear theory.
TEST(PmPoisson, PlaneWaveAccelerationIsFourPiGRhoTimesTheDisplacement) {
  for (int order : {2, 4}) {
    const int n = 32;
    PmSettings s;
    s.mesh = n;
    s.box = 1.0;
    s.boundary = Boundary::periodic;
    s.assignment = Assignment::cic;
    s.difference_order = order;
    s.threads = 2;
    const double h = 1.0 / n, A = 0.01 * h;
    std::vector<std::array<double, 3>> x;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        for (int k = 0; k < n; ++k) {
          // At the cell faces: CIC's weights are smooth there (at the centres their slope jumps).
          const double q = i * h;
          x.push_back({q + A * std::sin(2 * M_PI * q), (j + 0.5) * h, (k + 0.5) * h});
        }
    const double m = 1.0 / x.size();  // rho_bar = 1
    auto p = particles_at(x, std::vector<double>(x.size(), m));
    auto f = make_cpu_mesh_forces<double>(s);
    std::vector<double> acc;
    f->accelerations(p, &acc, nullptr);
    const long np = p.size();
    double worst = 0, amplitude = 4 * M_PI * A;
    for (long i = 0; i < np; ++i) {
      const double q = std::round(p.x[0][i] / h) * h;
      const double expected = 4 * M_PI * A * std::sin(2 * M_PI * q);
      worst = std::max(worst, std::fabs(acc[i] - expected) / amplitude);
      EXPECT_LT(std::fabs(acc[np + i]) + std::fabs(acc[2 * np + i]), 1e-12 * amplitude);
    }
    // At 32 cells a wavelength: CIC's windows of assignment and interpolation (1 - (kh)^2 / 12
    // each, 0.3%) and the 2nd-order difference's sin(kh) / kh (0.6%); the issue asks 0.5% at 512^3.
    EXPECT_LT(worst, order == 4 ? 5e-3 : 1.2e-2) << "order " << order;
  }
}

// The two-particle force (isolated): a unit mass at a random sub-cell offset and 400 light test
// masses (1e-9 each: their pull on one another is 1e-7 of it) at 0.5 to 11 cells in random
// directions; the radial mesh force against G M / r^2, its worst and rms error per range of r.
struct ForceErrors {
  double worst[4] = {0, 0, 0, 0}, rms[4] = {0, 0, 0, 0};  // r in [1, 2), [2, 3), [3, 4), [4, 11) cells
};
ForceErrors two_particle_errors(Assignment a, int order) {
  PmSettings s = centred(32, 32.0, Boundary::isolated);
  s.assignment = a;
  s.difference_order = order;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double c[3] = {u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5};
  std::vector<std::array<double, 3>> x = {{c[0], c[1], c[2]}};
  std::vector<double> r;
  for (int t = 0; t < 400; ++t) {
    r.push_back(0.5 + 10.5 * u(rng));
    const double z = 2 * u(rng) - 1, phi = 2 * M_PI * u(rng), rho = std::sqrt(1 - z * z);
    x.push_back({c[0] + r.back() * rho * std::cos(phi), c[1] + r.back() * rho * std::sin(phi), c[2] + r.back() * z});
  }
  std::vector<double> m(x.size(), 1e-9);
  m[0] = 1.0;
  auto p = particles_at(x, m);
  auto f = make_cpu_mesh_forces<double>(s);
  std::vector<double> acc;
  f->accelerations(p, &acc, nullptr);
  const long np = p.size();
  ForceErrors e;
  int count[4] = {0, 0, 0, 0};
  for (long i = 1; i < np; ++i) {
    double radial = 0;
    for (int d = 0; d < 3; ++d) radial -= acc[static_cast<std::size_t>(d) * np + i] * (x[i][d] - c[d]) / r[i - 1];
    const double err = radial * r[i - 1] * r[i - 1] - 1.0, R = r[i - 1];
    const int bin = R < 1 ? -1 : R < 2 ? 0 : R < 3 ? 1 : R < 4 ? 2 : 3;
    if (bin < 0) continue;
    e.worst[bin] = std::max(e.worst[bin], std::fabs(err));
    e.rms[bin] += err * err;
    ++count[bin];
  }
  for (int b = 0; b < 4; ++b) e.rms[b] = std::sqrt(e.rms[b] / std::max(1, count[b]));
  return e;
}

TEST(PmForce, TwoParticleForceIsNewtonsBeyondThreeCells) {
  // TSC with the free-space force kernels: Newton's force to 1% at worst from 3 cells (0.9%
  // measured), 0.5% beyond 4; with 4th-order differences of the potential, 1% rms from 3 cells and
  // 1.5% at worst beyond 4; CIC with 2nd-order differences is rougher: 5% rms beyond 4 cells.
  const ForceErrors kernel = two_particle_errors(Assignment::tsc, 0);
  const ForceErrors fd4 = two_particle_errors(Assignment::tsc, 4);
  const ForceErrors cic = two_particle_errors(Assignment::cic, 2);
  for (const ForceErrors* e : {&kernel, &fd4, &cic})
    std::printf(
        "two-particle force error, rms (worst) in [1,2) [2,3) [3,4) [4,11) cells: %.4f (%.4f) %.4f (%.4f) "
        "%.4f (%.4f) %.4f (%.4f)\n",
        e->rms[0], e->worst[0], e->rms[1], e->worst[1], e->rms[2], e->worst[2], e->rms[3], e->worst[3]);
  EXPECT_LT(kernel.worst[2], 0.01);
  EXPECT_LT(kernel.worst[3], 0.005);
  EXPECT_LT(fd4.rms[2], 0.01);
  EXPECT_LT(fd4.worst[3], 0.015);
  EXPECT_LT(cic.rms[3], 0.05);
  EXPECT_GT(kernel.rms[0], 0.01);  // and near the mesh's own scale the force is softened, as it must be
}

// Momentum: CIC/TSC assignment and interpolation with a centred difference exert no net force
// (Hockney & Eastwood sec. 5-5); in a periodic box the sum of m a is zero to round-off.
TEST(PmForce, NetForceVanishesAndMomentumIsKept) {
  PmSettings s = centred(32, 4.0, Boundary::periodic);
  s.assignment = Assignment::tsc;
  auto p = plummer<double>(20000, 5, 1.0, 0.5);
  PmEngine<double> engine(p, s, make_cpu_mesh_forces<double>(s));
  const PmDiagnostics d0 = engine.diagnostics();
  for (int k = 0; k < 20; ++k) engine.step(0.01);
  const PmDiagnostics d1 = engine.diagnostics();
  double speed = 0;
  for (long i = 0; i < p.size(); ++i) speed += p.mass[i] * std::fabs(p.v[0][i]);
  for (int c = 0; c < 3; ++c) EXPECT_LT(std::fabs(d1.momentum[c] - d0.momentum[c]), 1e-13 * speed) << c;
}

// FFT and multigrid solve the same 7-point equation on a periodic mesh: the same potential to the
// multigrid tolerance; and the multigrid solution's residual is what it reports.
TEST(PmPoisson, FftAndMultigridAgree) {
  PmSettings s = centred(32, 4.0, Boundary::periodic);
  auto p = plummer<double>(50000, 9, 1.0, 0.5);
  auto fft = make_cpu_mesh_forces<double>(s);
  s.solver = Solver::multigrid;
  s.multigrid_tolerance = 1e-11;
  auto mg = make_cpu_mesh_forces<double>(s);
  auto q = p;
  std::vector<double> a1, a2;
  fft->accelerations(p, &a1, nullptr);
  mg->accelerations(q, &a2, nullptr);
  EXPECT_LT(mg->timings().multigrid_residual, 1e-11);
  EXPECT_LE(mg->timings().multigrid_cycles, 20);  // a V-cycle gains a factor of ~10 here
  const std::vector<double> phi1 = fft->potential(), phi2 = mg->potential();
  double scale = 0, diff = 0;
  for (std::size_t c = 0; c < phi1.size(); ++c) {
    scale = std::max(scale, std::fabs(phi1[c]));
    diff = std::max(diff, std::fabs(phi1[c] - phi2[c]));
  }
  EXPECT_LT(diff, 1e-9 * scale);
  double amax = 0, adiff = 0;
  for (std::size_t i = 0; i < a1.size(); ++i) {
    amax = std::max(amax, std::fabs(a1[i]));
    adiff = std::max(adiff, std::fabs(a1[i] - a2[i]));
  }
  EXPECT_LT(adiff, 1e-8 * amax);
}

// A Plummer sphere (Henon units) stays in equilibrium for 10 dynamical times with the leapfrog:
// its 10/50/90% Lagrangian radii within stated bounds of their start, the energy to 1%. The mesh
// (h = 0.1875, a third of the Plummer radius) softens the centre: the inner radii grow a little.
TEST(PmEngine, PlummerSphereStaysInEquilibrium) {
  PmSettings s = centred(64, 12.0, Boundary::isolated);
  s.assignment = Assignment::tsc;
  auto p = plummer<float>(20000, 21, 1.0, 1.0, 4.0);
  auto radii = [](const ParticleSet<float>& q) {
    std::vector<double> r;
    for (long i = 0; i < q.size(); ++i)
      r.push_back(
          std::sqrt(double(q.x[0][i]) * q.x[0][i] + double(q.x[1][i]) * q.x[1][i] + double(q.x[2][i]) * q.x[2][i]));
    std::sort(r.begin(), r.end());
    return std::array<double, 3>{r[r.size() / 10], r[r.size() / 2], r[r.size() * 9 / 10]};
  };
  const auto r0 = radii(p);
  PmEngine<float> engine(p, s, make_cpu_mesh_forces<float>(s));
  const PmDiagnostics d0 = engine.diagnostics();
  for (int k = 0; k < 100; ++k) engine.step(0.1);  // T = 10
  const PmDiagnostics d1 = engine.diagnostics();
  const auto r1 = radii(engine.particles());
  std::printf("Lagrangian radii after T = 10: %.4f %.4f %.4f of their start; energy %.5f of it; off the mesh %ld\n",
              r1[0] / r0[0], r1[1] / r0[1], r1[2] / r0[2], d1.total() / d0.total(), d1.off_mesh);
  EXPECT_NEAR(r1[0] / r0[0], 1.0, 0.10);
  EXPECT_NEAR(r1[1] / r0[1], 1.0, 0.06);
  EXPECT_NEAR(r1[2] / r0[2], 1.0, 0.04);
  EXPECT_NEAR(d1.total() / d0.total(), 1.0, 0.01);
  EXPECT_LT(d1.off_mesh, 20);  // the truncated sphere's fastest leave the mesh
}

// The results do not depend on the number of threads (the deterministic assignment).
TEST(PmEngine, OneAndTwoThreadsGiveTheSameBits) {
  PmSettings s = centred(32, 8.0, Boundary::isolated);
  auto p = plummer<double>(5000, 2, 1.0, 1.0, 3.0);
  s.threads = 1;
  PmEngine<double> a(p, s, make_cpu_mesh_forces<double>(s));
  s.threads = 2;
  PmEngine<double> b(p, s, make_cpu_mesh_forces<double>(s));
  for (int k = 0; k < 10; ++k) {
    a.step(0.05);
    b.step(0.05);
  }
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(a.particles().x[d], b.particles().x[d]);
    EXPECT_EQ(a.particles().v[d], b.particles().v[d]);
  }
}
