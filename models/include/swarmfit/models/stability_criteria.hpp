// Analytic stability criteria of a planetary system from its orbits, no integration:
//  - AMD stability (Laskar & Petit 2017, A&A 605, A72): the angular momentum deficit
//      C = sum_k Lambda_k (1 - sqrt(1 - e_k^2) cos i_k),  Lambda_k = m_k sqrt(G M_* a_k),
//    (i_k to the invariable plane; computed as sum Lambda_k - |sum L_k|, L_k the orbits' angular
//    momenta) is conserved by the secular dynamics and can be exchanged between orbits; a pair (inner,
//    outer) cannot collide if beta = C / Lambda_outer < C_c(alpha, gamma), alpha = a / a',
//    gamma = m / m' (their eq. 35-37: the smallest AMD that lets the orbits touch). With the
//    mean-motion-resonance-overlap correction of Petit, Laskar & Boue (2017, A&A 607, A35, eq. 58):
//    close pairs (alpha near 1) whose first-order resonances overlap are chaotic below that,
//      C_c = min(C_c,collision, g^2 gamma sqrt(alpha) / (2 (1 + gamma sqrt(alpha)))),
//      g = 3^4 (1 - alpha)^5 / (2^9 r eps) - 32 r eps / (9 (1 - alpha)^2), r = 0.80199,
//      eps = (m + m') / M_*.
//  - Two-planet Hill stability (Gladman 1993, Icarus 106, 247; Marchal & Bozis 1982): no close
//    approach is ever possible if beta (the pair's own AMD over Lambda') is below, in the AMD form
//    of Petit, Laskar & Boue (2018, A&A 617, A93, eq. 26), with zeta = gamma / (1 + gamma),
//      C_H = gamma sqrt(alpha) + 1 - (1 + gamma) sqrt(alpha (1 + 3^(4/3) eps^(2/3) zeta (1 - zeta))
//                                                   / (zeta + (1 - zeta) alpha)),
//    which for circular orbits and small masses is Gladman's Delta > 2 sqrt(3) R_H.
//  - Orbit crossing: a (1 + e) >= a' (1 - e') for some adjacent pair.
#pragma once

#include <vector>

namespace swarmfit {

// One planet's orbit about the star (astrocentric or Jacobi elements), masses in solar masses.
// The orbit's plane: inclination and node in any fixed frame (the sky frame of a model is fine):
// the AMD is taken about the total angular momentum, C = sum Lambda_k - |sum L_k|, so only the
// mutual inclinations matter.
struct PlanetOrbit {
  double mass;
  double a;
  double e;
  double inc = 0.0;   // radians
  double node = 0.0;  // radians
};

// C_c(alpha, gamma) of Laskar & Petit (2017): the critical AMD of a pair for collision, in units of
// the outer planet's Lambda'. alpha in (0, 1].
double amd_critical_collision(double alpha, double gamma);
// The MMR-overlap critical AMD (Petit, Laskar & Boue 2017), in the same units; 0 where the
// resonances overlap for circular orbits already.
double amd_critical_mmr(double alpha, double gamma, double epsilon);
// The two-planet Hill-stability critical AMD (Petit, Laskar & Boue 2018), same units (may be < 0:
// Hill unstable whatever the eccentricities).
double amd_critical_hill(double alpha, double gamma, double epsilon);

struct PairStability {
  double beta = 0.0;       // C / Lambda' (the system's whole AMD)
  double beta_c = 0.0;     // min(collision, MMR overlap) critical value
  double beta_hill = 0.0;  // Hill critical value (with the pair's own AMD)
  bool amd_stable = false;
  bool hill_stable = false;
  bool crossing = false;
};
struct CriteriaResult {
  std::vector<PairStability> pairs;  // adjacent pairs by semi-major axis
  bool amd_stable = true;            // every pair
  bool hill_stable = true;           // every pair (strictly a two-planet criterion)
  bool crossing = false;             // some pair's orbits cross
};

// G in the units of the masses and semi-major axes (AMD ratios do not depend on it).
CriteriaResult stability_criteria(double star_mass, std::vector<PlanetOrbit> planets);

}  // namespace swarmfit
