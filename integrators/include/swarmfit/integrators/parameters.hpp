// Plain parameter blocks passed by value into kernels (no pointers, no allocation).
#pragma once

namespace swarmfit {

// Why a system stopped. Codes are stable: they are written to output files.
enum StatusCode : int {
  kStatusOk = 0,              // running, or reached its destination time
  kStatusCloseEncounter = 1,  // two planets closer than close_approach mutual Hill radii
  kStatusEjected = 2,         // a body beyond rmax from the star, or unbound (stop_on_unbound)
  kStatusCollision = 3,       // two bodies closer than the sum of their physical radii
  kStatusNonFinite = 4,       // a position or velocity became NaN or infinite
  kStatusStepBudget = 5,      // max_steps reached before the destination time
  kStatusKeplerFailure = 6,   // the Kepler solver did not converge (MVS)
  kStatusStepUnderflow = 7,   // an adaptive step too small to advance the time, zero or NaN
  kStatusPadding = -1,        // an unused slot of the last chunk; never integrated
};
// Codes from kFirstObserverStatus on belong to observers (models/ defines the likelihood's).
constexpr int kFirstObserverStatus = 8;

// The name of an engine status code ("unknown" for an observer's: see models/status.hpp).
const char* status_name(int code);

enum class MvsCoordinates : int { kDemocraticHeliocentric = 0, kJacobi = 1 };
// Order of the three operators in one palindromic MVS step A(h/2) B(h/2) C(h) B(h/2) A(h/2);
// the outer operator of consecutive steps is merged.
enum class MvsSplitting : int {
  kJumpKickKepler = 0,  // drift-kick-Kepler-kick-drift (Swarm-NG mvs)
  kKickJumpKepler = 1,  // Duncan, Levison & Lee (1998) eq. 11 (SyMBA)
  kKeplerJumpKick = 2,  // REBOUND WHFast democratic heliocentric (Rein & Tamayo 2015)
};

// What a scheme says of one integrator it provides (a scheme may provide a fixed-step and an
// adaptive one): `static constexpr IntegratorEntry kIntegrators[]` of the scheme template.
struct IntegratorEntry {
  const char* name;
  bool adaptive;    // variable step size
  int order;        // global order of accuracy in the step
  bool symplectic;  // bounded energy error, no secular drift
  // Force evaluations per step (benchmarks count pair evaluations as this times the pairs), and
  // whether they cover the planet pairs only (the star's pairs are in the Kepler part).
  int force_evaluations;
  bool planet_pairs_only;
  const char* citation;
  const char* description;
  const char* parameters;  // configuration keys the integrator reads, space separated
};

struct StepParams {
  double G = 1.0;
  double time_step = 1e-3;  // fixed step, or first step of an adaptive run
  bool adaptive = false;
  double time_step_factor = 1.7e-2;  // Hermite adaptive tau (Swarm-NG eq. 5)
  double error_tolerance = 1e-10;    // RKCK adaptive per-step error tolerance
  double min_time_step = 0.0;
  double max_time_step = 1e300;
  MvsCoordinates mvs_coordinates = MvsCoordinates::kDemocraticHeliocentric;
  MvsSplitting mvs_splitting = MvsSplitting::kJumpKickKepler;
  // mvs with Jacobi coordinates and the kepler_jump_kick (drift-kick-drift) splitting: order of
  // the symplectic corrector applied when the integration starts and ends (0 = none; 3, 5, 7).
  int mvs_corrector = 0;
};

struct MonitorParams {
  double rmax = 0.0;             // eject beyond this distance from the star; 0 = off
  bool stop_on_unbound = false;  // eject a planet on an outgoing unbound heliocentric orbit
  double close_approach = 0.0;   // stop below this many mutual Hill radii; 0 = off
  bool collisions = false;       // stop when |x_i - x_j| < R_i + R_j
  double max_steps = 0.0;        // per system step budget per call; 0 = unlimited
};

}  // namespace swarmfit
