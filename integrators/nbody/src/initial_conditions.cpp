#include "swarmfit/nbody/initial_conditions.hpp"

#include <cmath>
#include <stdexcept>

#include "swarmfit/nbody/sampling.hpp"

namespace swarmfit::nbody {

namespace {

void start_at_rest(Bodies& b, long n) {
  b.resize(n);
  b.num_massive = n;
  for (long i = 0; i < n; ++i) {
    b.id[i] = i;
    b.time[i] = 0.0;
    b.step[i] = 0.0;
    BodyState& s = b.state[i];
    for (int d = 0; d < 3; ++d) s.x[d] = s.v[d] = s.a[d] = s.j[d] = s.s[d] = s.c[d] = 0.0;
  }
}

void to_centre_of_mass(Bodies& b) {
  double m = 0, x[3] = {0, 0, 0}, v[3] = {0, 0, 0};
  for (long i = 0; i < b.num_massive; ++i) {
    m += b.mass[i];
    for (int d = 0; d < 3; ++d) {
      x[d] += b.mass[i] * b.state[i].x[d];
      v[d] += b.mass[i] * b.state[i].v[d];
    }
  }
  for (long i = 0; i < b.size(); ++i)
    for (int d = 0; d < 3; ++d) {
      b.state[i].x[d] -= x[d] / m;
      b.state[i].v[d] -= v[d] / m;
    }
}

}  // namespace

Bodies plummer_sphere(long n, std::uint64_t seed, double max_radius) {
  if (n < 2) throw std::invalid_argument("a Plummer sphere needs at least 2 bodies");
  Bodies b;
  start_at_rest(b, n);
  Uniform u(seed);
  for (long i = 0; i < n; ++i) {
    b.mass[i] = 1.0 / n;
    plummer_body(u, max_radius, b.state[i].x, b.state[i].v);
  }
  to_centre_of_mass(b);
  return b;
}

Bodies cold_sphere(long n, std::uint64_t seed, double radius) {
  if (n < 2) throw std::invalid_argument("a cold sphere needs at least 2 bodies");
  Bodies b;
  start_at_rest(b, n);
  Uniform u(seed);
  for (long i = 0; i < n; ++i) {
    b.mass[i] = 1.0 / n;
    isotropic(u, radius * std::cbrt(u()), b.state[i].x);
  }
  to_centre_of_mass(b);
  return b;
}

Bodies figure_eight() {
  Bodies b;
  start_at_rest(b, 3);
  const double x1[3] = {0.97000436, -0.24308753, 0.0}, v3[3] = {-0.93240737, -0.86473146, 0.0};
  for (int d = 0; d < 3; ++d) {
    b.state[0].x[d] = x1[d];
    b.state[1].x[d] = -x1[d];
    b.state[2].x[d] = 0.0;
    b.state[0].v[d] = b.state[1].v[d] = -0.5 * v3[d];
    b.state[2].v[d] = v3[d];
  }
  for (int i = 0; i < 3; ++i) b.mass[i] = 1.0;
  return b;
}

Bodies kepler_pair(double e, double a, double mu) {
  Bodies b;
  start_at_rest(b, 2);
  b.mass[0] = 1.0 - mu;
  b.mass[1] = mu;
  const double rp = a * (1.0 - e), vp = std::sqrt((1.0 + e) / (a * (1.0 - e)));  // G M = 1
  b.state[0].x[0] = -mu * rp;
  b.state[1].x[0] = (1.0 - mu) * rp;
  b.state[0].v[1] = -mu * vp;
  b.state[1].v[1] = (1.0 - mu) * vp;
  return b;
}

// Table: a, e, i, Omega, varpi, L at J2000 and the centennial rate of L ("/Cy) of the JPL mean
// orbits; periods = 1296000" / rate x 36525 d.
const PlanetTable kPlanets[8] = {
    {"Mercury", 6023600.0, 0.38709893, 0.20563069, 7.00487, 48.33167, 77.45645, 252.25084,
     1296000.0 / 538101628.29 * 36525.0},
    {"Venus", 408523.71, 0.72333199, 0.00677323, 3.39471, 76.68069, 131.53298, 181.97973,
     1296000.0 / 210664136.06 * 36525.0},
    {"Earth", 328900.56, 1.00000011, 0.01671022, 0.00005, -11.26064, 102.94719, 100.46435,
     1296000.0 / 129597740.63 * 36525.0},
    {"Mars", 3098708.0, 1.52366231, 0.09341233, 1.85061, 49.57854, 336.04084, 355.45332,
     1296000.0 / 68905103.78 * 36525.0},
    {"Jupiter", 1047.3486, 5.20336301, 0.04839266, 1.30530, 100.55615, 14.75385, 34.40438,
     1296000.0 / 10925078.35 * 36525.0},
    {"Saturn", 3497.898, 9.53707032, 0.05415060, 2.48446, 113.71504, 92.43194, 49.94432,
     1296000.0 / 4401052.95 * 36525.0},
    {"Uranus", 22902.98, 19.19126393, 0.04716771, 0.76986, 74.22988, 170.96424, 313.23218,
     1296000.0 / 1542547.79 * 36525.0},
    {"Neptune", 19412.24, 30.06896348, 0.00858587, 1.76917, 131.72169, 44.97135, 304.88003,
     1296000.0 / 786449.21 * 36525.0},
};

namespace {

double rayleigh(Uniform& u, double scale) { return scale * std::sqrt(-2.0 * std::log(u())); }

}  // namespace

Bodies solar_system(long belt, std::uint64_t seed, bool giants_only) {
  if (belt < 0) throw std::invalid_argument("the belt needs 0 or more particles");
  const int first = giants_only ? 4 : 0, planets = 8 - first;
  Bodies b;
  start_at_rest(b, 1 + planets);
  const double deg = M_PI / 180.0;
  // Giants only: the terrestrial planets' masses go to the Sun (their orbits are far inside).
  b.mass[0] = 1.0;
  for (int p = 0; p < first; ++p) b.mass[0] += 1.0 / kPlanets[p].mass_ratio;
  // Each planet's elements taken as Jacobi elements: its orbit about the centre of mass of the Sun
  // and the planets inside it, mu = G (M_sun + the masses inside + its own). Taken about the Sun
  // alone (heliocentric), the Sun's reflex motion about Jupiter enters the outer planets'
  // velocities, and Saturn's period came out 0.7% short of the table's.
  double inner_mass = b.mass[0], cx[3] = {0, 0, 0}, cv[3] = {0, 0, 0};
  for (int p = first; p < 8; ++p) {
    const PlanetTable& t = kPlanets[p];
    const double m = 1.0 / t.mass_ratio;
    const int k = p - first + 1;
    b.mass[k] = m;
    const double omega = (t.varpi - t.node) * deg, M = std::remainder((t.L - t.varpi) * deg, 2 * M_PI);
    double x[3], v[3];
    elements_to_state(kSolarSystemG * (inner_mass + m), t.a, t.e, t.i * deg, t.node * deg, omega, M, x, v);
    for (int d = 0; d < 3; ++d) {
      b.state[k].x[d] = cx[d] + x[d];
      b.state[k].v[d] = cv[d] + v[d];
      cx[d] = (inner_mass * cx[d] + m * b.state[k].x[d]) / (inner_mass + m);
      cv[d] = (inner_mass * cv[d] + m * b.state[k].v[d]) / (inner_mass + m);
    }
    inner_mass += m;
  }
  append_test_particles(b, belt);
  Uniform u(seed);
  for (long k = 0; k < belt; ++k) {
    BodyState& s = b.state[1 + planets + k];
    const double a = 35.0 + 15.0 * u(), e = std::min(0.9, rayleigh(u, 0.05)), i = rayleigh(u, 0.035);
    elements_to_state(kSolarSystemG, a, e, i, 2 * M_PI * u(), 2 * M_PI * u(), 2 * M_PI * u(), s.x, s.v);
  }
  // The belt's elements are heliocentric; the frame then moves to the centre of mass.
  to_centre_of_mass(b);
  return b;
}

void LongitudePeriods::add(double t, const Bodies& b) {
  for (std::size_t p = 1; p < last_.size(); ++p) {
    const double l = std::atan2(b.state[p].x[1] - b.state[0].x[1], b.state[p].x[0] - b.state[0].x[0]);
    if (samples_ > 0) turns_[p] += l - last_[p] < -M_PI ? 1 : l - last_[p] > M_PI ? -1 : 0;
    last_[p] = l;
    const double unwrapped = l + 2 * M_PI * turns_[p];
    st_[p] += t;
    sl_[p] += unwrapped;
    stt_[p] += t * t;
    stl_[p] += t * unwrapped;
  }
  ++samples_;
}

double LongitudePeriods::period(int p) const {
  const double n = static_cast<double>(samples_);
  const double rate = (n * stl_[p] - st_[p] * sl_[p]) / (n * stt_[p] - st_[p] * st_[p]);
  return 2 * M_PI / rate;
}

void append_test_particles(Bodies& b, long count) {
  const long n = b.size();
  b.resize(n + count);
  for (long i = n; i < n + count; ++i) {
    b.mass[i] = 0.0;
    b.id[i] = i;
    b.time[i] = n > 0 ? b.time[0] : 0.0;
    b.step[i] = 0.0;
    BodyState& s = b.state[i];
    for (int d = 0; d < 3; ++d) s.x[d] = s.v[d] = s.a[d] = s.j[d] = s.s[d] = s.c[d] = 0.0;
  }
}

// Heliocentric position and velocity from elements (angles in radians; M the mean anomaly), for
// G (M + m) = mu: Kepler's equation by Newton's method, then the rotations by omega, i, Omega.
void elements_to_state(double mu, double a, double e, double i, double node, double omega, double M, double x[3],
                       double v[3]) {
  double E = e < 0.8 ? M : M_PI;
  for (int k = 0; k < 100; ++k) {
    const double dE = (E - e * std::sin(E) - M) / (1 - e * std::cos(E));
    E -= dE;
    if (std::fabs(dE) < 1e-15) break;
  }
  const double cE = std::cos(E), sE = std::sin(E), b = a * std::sqrt(1 - e * e);
  const double px = a * (cE - e), py = b * sE;  // in the orbit plane, pericentre on x
  const double n = std::sqrt(mu / (a * a * a)), Edot = n / (1 - e * cE);
  const double vx = -a * sE * Edot, vy = b * cE * Edot;
  const double cw = std::cos(omega), sw = std::sin(omega), cO = std::cos(node), sO = std::sin(node);
  const double ci = std::cos(i), si = std::sin(i);
  const double R[3][2] = {{cO * cw - sO * sw * ci, -cO * sw - sO * cw * ci},
                          {sO * cw + cO * sw * ci, -sO * sw + cO * cw * ci},
                          {sw * si, cw * si}};
  for (int d = 0; d < 3; ++d) {
    x[d] = R[d][0] * px + R[d][1] * py;
    v[d] = R[d][0] * vx + R[d][1] * vy;
  }
}

OrbitElements state_to_elements(const BodyState& body, const BodyState& centre, double mu) {
  double r[3], v[3];
  for (int d = 0; d < 3; ++d) {
    r[d] = body.x[d] - centre.x[d];
    v[d] = body.v[d] - centre.v[d];
  }
  auto dot = [](const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; };
  auto cross = [](const double* a, const double* b, double* c) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
  };
  double h[3], e[3], tmp[3];
  cross(r, v, h);
  const double rr = std::sqrt(dot(r, r)), v2 = dot(v, v), rv = dot(r, v), hn = std::sqrt(dot(h, h));
  for (int d = 0; d < 3; ++d) e[d] = ((v2 - mu / rr) * r[d] - rv * v[d]) / mu;
  const double node[3] = {-h[1], h[0], 0.0};  // z x h, towards the ascending node
  OrbitElements o;
  o.a = 1.0 / (2.0 / rr - v2 / mu);
  o.e = std::sqrt(dot(e, e));
  o.i = std::acos(h[2] / hn);
  o.node = std::atan2(node[1], node[0]);
  cross(node, e, tmp);
  o.omega = std::atan2(dot(tmp, h) / hn, dot(node, e));
  cross(e, r, tmp);
  const double f = std::atan2(dot(tmp, h) / hn, dot(e, r));
  const double E = 2 * std::atan(std::sqrt((1 - o.e) / (1 + o.e)) * std::tan(f / 2));
  o.M = E - o.e * std::sin(E);
  return o;
}

}  // namespace swarmfit::nbody
