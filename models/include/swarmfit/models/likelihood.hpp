// The batched log-likelihood of a planetary-system model given RV and transit-time data: one
// ensemble integration per batch, one system per parameter set, with the likelihood observer
// (likelihood_observer.hpp) reducing everything on the chip to ln L and a status code.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "swarmfit/integrators/backend.hpp"
#include "swarmfit/models/ephemeris.hpp"
#include "swarmfit/models/likelihood_kernels.hpp"
#include "swarmfit/models/planetary_model.hpp"
#include "swarmfit/observations/dataset.hpp"

namespace swarmfit {

class LaunchPacker;

struct LikelihoodSettings {
  std::string integrator = "mvs";
  bool mvs_jacobi = true;  // mvs: Jacobi (with the drift-kick-drift kernel) or democratic heliocentric
  int mvs_corrector = 3;   // mvs Jacobi: symplectic corrector order (0, 3, 5, 7); 3 as TTVFast (bench/RESULTS.md)
  double time_step = 0.0;  // days; <= 0: default_step_fraction(integrator) x the shortest period
  // With time_step <= 0, how settle_time_step (step_check.hpp) chooses the step: "refine" (the
  // default step, halved until the step check passes) or "largest" (also doubled, at most
  // kMaxStepDoublings times, while the check at the doubled step passes).
  std::string step_choice = "refine";
  double star_radius = units_solar_radius();  // AU; a conjunction farther from the star's centre is no transit
  bool marginalize_offsets = false;
  double student_nu = 0.0;  // > 0: Student-t transit-time likelihood with nu degrees of freedom
  MonitorParams monitors = default_monitors();
  std::string backend = "cpu";
  int threads = 0;
  double extra_time = 0.0;  // integrate this much beyond the data (days), e.g. for predictions
  // cuda: slices of a batch pipelined against the host's set-up (LikelihoodPipeline); 0 = auto,
  // 1 = one slice (no overlap).
  int cuda_slices = 0;
  // cuda: bitwise the cpu backend's ln L (RunRequest::reproducible; the host sets the systems up,
  // as for the cpu backend, instead of the device's set-up kernel, whose sines and cosines differ).
  bool reproducible = false;
  // cuda: the likelihood kernels' threads (RunRequest::cuda_layout): a thread per system, per body
  // (mvs, Jacobi coordinates: cuda_body_kernels.cuh), or auto.
  CudaLayout cuda_layout = CudaLayout::kAuto;
  // Set (fit key ephemeris = mean, ephemeris.hpp): the parameters' periods and tc of the mapped
  // planets are their mean ephemeris; every evaluation integrates the osculating g(y) (one more
  // integration). Batches are then not packed.
  std::shared_ptr<const EphemerisMap> ephemeris;
  // Set (the catalog's packing, likelihood_packing.hpp): the batches go to this packer, which
  // runs them in launches shared with other problems' batches (same ln L and status, bitwise).
  std::shared_ptr<LaunchPacker> packer;
  // With a packer: the name its time is booked under (LaunchPacker::times; the catalog's target).
  std::string packing_label;

  static double units_solar_radius();
  static MonitorParams default_monitors();
};

// Whether a problem's batches may run a thread per body on the GPU (cuda_layout body, or auto with
// kCudaBodyLayoutFrom bodies or more; mvs in Jacobi coordinates, the one likelihood body kernel).
// Such a problem is not packed: a packed launch would run it a thread per system, slower, and its
// chain would not be the one it gives alone.
bool cuda_body_layout_possible(const LikelihoodSettings& settings, int num_bodies);

// A scheme's default step as a fraction of the shortest period. Kepler-splitting schemes (mvs, whfast,
// saba4) integrate the Keplerian motion exactly and err by O(eps h^2) (Wisdom & Holman 1991):
// 1/20, as TTVFast users do (bench/RESULTS.md). The others integrate the orbit itself, with
// errors O((h/P)^order) per orbit that grow along the data's span: smaller the lower the
// order. Either way the model's check at half the step (step_check.hpp) decides.
double default_step_fraction(const std::string& integrator);

// Model curves of one batch, filled on request.
struct ModelCurves {
  std::vector<double> rv;        // [system][rv point], m/s, before instrument offsets
  std::vector<double> transits;  // [system][transit row of LikelihoodProblem::transit_rows()], BJD_TDB
  // Set by the caller: transits in days since the reference epoch instead, as the observers
  // compute them (an absolute BJD rounds them to 4.7e-10 d).
  bool relative_times = false;
};

class LikelihoodProblem {
 public:
  // Throws InputError when the data do not fit the model (a transit planet the model does not
  // have, data before the reference epoch, too many bodies or instruments).
  LikelihoodProblem(const Dataset& data, const PlanetaryModel& model, const LikelihoodSettings& settings,
                    const std::vector<double>& typical_params);

  const PlanetaryModel& model() const { return model_; }
  const Dataset& data() const { return data_; }
  const LikelihoodSettings& settings() const { return settings_; }
  double time_step() const { return time_step_; }
  double end_time() const { return reference_epoch() + duration_; }
  double reference_epoch() const { return model_.options().reference_epoch; }

  // Transit rows as the observers see them: sorted by planet (model order) then epoch.
  const std::vector<TransitObservation>& transit_rows() const { return transit_rows_; }
  int transit_row_planet(int row) const { return transit_body_[row] - 1; }
  LinearEphemeris ephemeris(int planet) const;  // the data's linear ephemeris, BJD_TDB

  // params: n_systems columns of num_parameters() values (column k = parameters of system k).
  // Writes ln L (or -inf) and a status code per system; with curves, also the model RVs at the
  // data times and the model transit times of the data rows; with timing, the CUDA backend's
  // kernel and device times (benchmarks).
  void evaluate(const double* params, long n_systems, double* log_likelihood, int* status,
                ModelCurves* curves = nullptr, DeviceTiming* timing = nullptr) const;
  // The same integrations without the observers (benchmarks: what the observers cost; with
  // timing, the CUDA backend's kernel and device times).
  void integrate_without_observers(const double* params, long n_systems, int* status,
                                   DeviceTiming* timing = nullptr) const;
  // The star's RV (m/s, barycentric, no offset) at arbitrary times, for plots and predictions.
  void rv_curve(const double* params, long n_systems, const std::vector<double>& times, std::vector<double>& rv,
                std::vector<int>& status) const;

  // What a packed launch (likelihood_packing.hpp) takes from the problem: its tables (host
  // pointers, no per-system arrays), its run, its per-instrument centres, the systems set up from
  // parameters on the host, and per system the instruments' offsets (less the centres) and jitters.
  const ObservationTables& tables() const { return tables_; }
  RunRequest run_request() const { return request(duration_); }
  RvCentres rv_centres() const;
  void build_ensemble(const double* params, long n_systems, Ensemble& ensemble, std::vector<int>& invalid) const;
  void offsets_and_jitters(const double* params, long n_systems, std::vector<double>& offsets,
                           std::vector<double>& jitters) const;
  // Whether evaluate() hands batches (without curves) to settings().packer.
  bool packed(const ModelCurves* curves) const;

  // Mean-ephemeris coordinates (ephemeris.hpp; settings().ephemeris set, or attached).
  bool has_ephemeris() const { return static_cast<bool>(ephemeris_); }
  const EphemerisMap* ephemeris_map() const { return ephemeris_.get(); }
  // Attaches a map (checked against the model; its rows' weights computed for these data).
  void attach_ephemeris(const EphemerisMap& map);
  // The osculating parameters x = g(y) of n columns y (one integration); status of that
  // integration per column (x = g0(y) where it failed).
  void osculating(const double* y, long n, std::vector<double>& x, std::vector<int>& status,
                  DeviceTiming* timing = nullptr) const;
  // Per column and mapped planet, (P, T - reference epoch) of the weighted line through model
  // transit times (days after the reference epoch, ModelCurves::relative_times): 2 m values.
  void mean_ephemeris(const double* transits_relative, long n, double* out) const;
  // evaluate() of the parameters as osculating elements, whatever the map.
  void evaluate_osculating(const double* params, long n, double* log_likelihood, int* status, ModelCurves* curves,
                           DeviceTiming* timing) const {
    evaluate_here(params, n, log_likelihood, status, curves, timing);
  }

 private:
  void evaluate_here(const double* params, long n_systems, double* log_likelihood, int* status, ModelCurves* curves,
                     DeviceTiming* timing) const;
  RunRequest request(double duration) const;

  Dataset data_;
  PlanetaryModel model_;
  LikelihoodSettings settings_;
  double time_step_ = 0.0;
  double duration_ = 0.0;
  std::vector<int> instrument_of_model_;  // dataset instrument -> model instrument
  std::vector<double> rv_time_, rv_value_, rv_error_, rv_centre_;
  std::vector<int> rv_instrument_;
  std::vector<TransitObservation> transit_rows_;
  std::vector<int> transit_body_;
  std::vector<double> transit_time_, transit_error_, transit_epoch_;
  ObservationTables tables_;  // host pointers into the vectors above
  // backend=cuda: device buffers and streams kept between batches (created on first use; shared
  // by copies, and safe to call from several threads: run() takes a lock).
  mutable std::shared_ptr<LikelihoodPipeline> pipeline_;
  std::shared_ptr<const EphemerisMap> ephemeris_;  // with its rows' weights for these data
};

// Mean-ephemeris coordinates (ephemeris.hpp). The map anchored at `anchor` (full osculating
// parameters: a fit's least-squares optimum): F and dF/dx there by central differences of `step`
// along the free parameters (indices `free`); the planets mapped are those with transit times at
// two epochs or more whose period and tc are free; n* from the `typical` (configuration) tc.
// Throws InputError where the model has none or cannot be integrated there.
std::shared_ptr<const EphemerisMap> anchor_ephemeris(const LikelihoodProblem& problem, const std::vector<int>& free,
                                                     const std::vector<double>& typical,
                                                     const std::vector<double>& anchor,
                                                     const std::vector<double>& step);
// Osculating full parameter columns -> their mean coordinates y = F(x), in place (status per
// column: where the integration fails the column is left as it was).
void to_mean_ephemeris(const LikelihoodProblem& problem, const EphemerisMap& map, double* params, long n,
                       std::vector<int>& status);

}  // namespace swarmfit
