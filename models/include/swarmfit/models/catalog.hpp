// Catalog reanalysis (`swarmfit catalog`): many targets, each fitted by the same pipeline as
// `swarmfit fit` (fit.hpp) into its own run file, and one summary of them all.
//
// A catalog description is a sectioned configuration (observations/config_file.hpp):
//   folder = DIR        a Systemic-format catalog (one NAME.sys per star listing its .vels RV
//                       files, as ../shared/catalogs/exoplanet-archive-rv), with
//   planets = FILE      its table of known planets (CSV, one row per planet; README "Catalogs")
//   targets = FILE      or a CSV of targets (columns target, star_mass, rv_files: .vels-format
//                       files separated by ';', beside the table), with `planets` as above
//                       (relative to the description)
//   [target NAME]       a target of its own: config = MODEL.cfg (any model configuration), or
//                       for a folder's star, keys that override the shared ones for it alone
// Every other global key is a model or fit key (walkers, generations, ess_target, backend, ...)
// shared by all targets. A folder's star becomes a generated model configuration: its RV files
// read and checked (the rules below), written in m/s and JD to the target's folder, one offset
// and jitter per file, its known planets with starting values and priors from the table.
//
// Checks of every RV file, each reported in one line of the catalog's report (the catalog's
// files are never changed; the cleaned copies go to the output folder):
//   - units: the label's (`value_units = KM/S`, else m/s), unless the numbers say the other: the
//     RVs when their scatter is outside [0.01, 100] x the star's largest known K in the label's
//     unit and inside it in the other; then the errors when the median error is outside
//     [1e-3, 10] x that scatter and inside it in the other unit (without a known K: KM/S files
//     with a scatter above 20 or errors above 1 are m/s, others with errors below 0.01 km/s);
//     errors above 10 x the scatter after that are reported and kept;
//   - `# JD = X` header (Kepler-16, -18): X added to every time;
//   - data lines commented out: left out, reported;
//   - a row that is not three finite numbers (extra columns, text): dropped;
//   - an error <= 0: the row dropped;
//   - a row repeated exactly (time, RV and error): the repeat dropped;
//   - a row at the time (to 1e-5 d) of an earlier row, with other values: dropped;
//   - a time before JD 2,400,000: the row dropped; a time in the future: the file not used;
//   - a row whose time and RV (to 1e-5 d and 1e-3 m/s) an earlier file of the star holds: the
//     same spectrum published twice, dropped from the later file;
//   - two files of the star whose times differ by a constant of 1 d or more (within 2e-3 d) for at
//     least 5 rows and 60% of the smaller file: the same spectra under shifted time stamps (Keck
//     files 1000 d early: HD4203, HD49674, HD68988, HD83443); the smaller file (the later on a
//     tie) is not used;
//   - 3 or more rows of a file at the times (within 2e-3 d) of an earlier file's rows of the same
//     instrument (the token of the file name), with other RVs: the same spectra reduced twice
//     (GJ 436, CoRoT-2, HAT-P-1, HD 3651), dropped from the later file;
//   - a file sharing rows (to 1e-4 d and 0.01 m/s) with files of two or more other stars: a table
//     of several stars, not used;
//   - RVs in two levels far apart (a gap in the sorted RVs above 1 km/s and 4 x the star's
//     largest known K, 3 or more RVs each side): more than one star in the file, not used;
//   - 5 or more rows of a file inside one transit of a known transiting planet (the table's
//     transiting = 1 and a time of conjunction; inside: within 0.75 T of mid-transit, T = P R* /
//     (pi a) the central duration of a circular orbit, R* = M*^0.8 solar radii, a from the table
//     or Kepler's third law): a Rossiter-McLaughlin sequence, whose anomaly the model does not
//     describe, dropped (WASP-24, WASP-3, HAT-P-1, HAT-P-13, ...); single in-transit rows are kept;
//   - a file of 8 or more rows whose RVs, fitted alone with one sinusoid at a transiting planet's
//     period (the star's dominant signal: other planets' K below a third of its; e <= 0.3), put
//     its conjunction more than 20 degrees + 2 e and 5 standard errors away from the table's
//     transit epoch, while another file of the star is in phase: its time stamps are shifted (XO-5's
//     Keck file, 4000 d early), not used; where no file is in phase the table's epoch is off and
//     that is reported, the files kept;
//   - fewer than 3 rows left: the file is not used.
// A target is skipped, with its reason, when no file is left, when no known planet has a period
// the data can constrain (P <= 1.5 x the data's time span), or when it has fewer RVs than its free
// parameters (5 per planet, an offset and a jitter per file) plus 5.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "swarmfit/inference/summary.hpp"
#include "swarmfit/models/fit.hpp"
#include "swarmfit/models/likelihood_packing.hpp"
#include "swarmfit/observations/config_file.hpp"

namespace swarmfit {

struct CatalogRow {
  double time = 0, rv = 0, error = 0;  // JD, m/s, m/s
  int line = 0;                        // in the original file
};

struct CatalogFile {
  std::string path;                   // the catalog's file
  std::string label;                  // its instrument name in the fit: TOKEN_n from NAME_n_TOKEN.vels
  std::string instrument;             // the header's instrument, as written
  std::vector<CatalogRow> rows;       // kept, in m/s and JD
  std::vector<std::string> findings;  // what the checks found and did, a line each
  bool usable = true;
};

struct CatalogPlanet {
  std::string letter;
  double period = 0, period_err = 0, K = 0, e = 0, omega_deg = 0;  // days, m/s
  double epoch = 0;
  std::string epoch_kind;  // tc, tperi or "" (none: a phase from the priors)
  std::string status, flags;
  bool transiting = false;  // the table's `transiting` = 1
  double a_au = 0;          // the table's semi-major axis (0: none)
  bool fitted = true;
  std::string why_not;  // when not fitted
};

struct CatalogTarget {
  std::string name;  // the .sys base name, or the [target NAME]
  std::string star;  // the .sys Name
  double star_mass = 0;
  std::string mass_source;  // planets.csv (OEC), .sys, or .sys placeholder
  std::vector<CatalogFile> files;
  std::vector<CatalogPlanet> planets;
  std::vector<std::string> findings;
  std::vector<ConfigEntry> overrides;  // from its [target NAME] section
  std::string config;                  // a target given by its own model configuration
  std::string skip;                    // non-empty: not fitted, and why
  long config_points = -1;             // a configuration's target: its RVs and transit times
  long points() const;                 // RV rows kept (or config_points)
};

struct CatalogSettings {
  std::string description;             // the catalog description file
  std::string output;                  // folder of the results (created)
  std::vector<std::string> overrides;  // key=value for every target (command line)
  std::vector<std::string> only;       // fit only these targets (all when empty)
  long max_targets = 0;                // the first N targets (0: all)
  bool check_only = false;             // read and check, write the report and configs, fit nothing
  int jobs = 1;  // targets fitted at once, each in a thread of its own (its fit's own `threads` inside)
  // Packing (likelihood_packing.hpp): the likelihood batches of the targets fitted at once share
  // launches. "auto": with jobs > 1, the targets on backend=cuda (not reproducible); "on": every
  // target (a packer per backend); "off": each target's batches are launched on their own.
  std::string pack = "auto";
  // How long a round of packed launches waits for a fit busy on the host before it goes without
  // its batch (LaunchPacker's max_wait), seconds.
  double pack_wait = 0.05;
  // Host targets: of the targets on backend = cuda (but those whose batches may run a thread per
  // body), the host_targets whose one system's integration is longest (steps x bodies^2) are
  // fitted on the host's CPU cores instead (backend = cpu; this process's cores shared among its
  // host targets as their `threads`, in proportion to a batch's work; with jobs = 1, all of them
  // each). One GPU thread steps a system several times slower than a CPU core does, so these few
  // targets' chains, which bound a packed catalog, end sooner on the host while the GPU fits the
  // rest. Chosen from the costs alone: the same targets at any rank count and in every sitting.
  // Over MPI ranks the i-th (costliest first) goes to rank i % ranks.
  int host_targets = 0;
  // Work spread over processes (MPI ranks, apps/src/mpi_work.hpp); unset, one process does it all.
  // The primary writes the report, configurations and summary; barrier() waits for all. Targets
  // go out costliest first. Packed, each rank fits a fixed share, balanced by the targets' costs
  // (rank of ranks; its targets share its launches from the start); otherwise next_target(count)
  // hands out the next of [0, count) to whichever process asks first (-1: none left).
  bool primary = true;
  int rank = 0, ranks = 1;
  int local_ranks = 1;  // the ranks on this host, which share its cores
  std::function<long(long)> next_target;
  std::function<void()> barrier;
};

// One row of the catalog summary: a target's planet (or, for a skipped target, the target).
struct CatalogResult {
  std::string target, planet, status;  // status: converged, not converged, skipped: WHY, failed: WHY
  // median, 16% and 84% of the period (d), K (m/s), m sin i (Jupiter masses), e, omega (deg), a (AU)
  double value[6][3] = {};
  double table_period = 0, table_K = 0;
  double worst_rhat = 0, min_ess = 0, max_log_likelihood = 0, seconds = 0;
  long generations = 0, points = 0;
};

struct CatalogCallbacks {
  std::function<void(const std::string&)> message;  // a line for the user (progress, findings)
  std::function<bool()> should_stop;                // polled by each fit: true stops the catalog
};

struct CatalogOutcome {
  std::vector<CatalogTarget> targets;
  std::vector<CatalogResult> results;
  long fitted = 0, skipped = 0, failed = 0, reused = 0;
  bool interrupted = false;
  PackingStats packing;  // the shared launches (zeros without packing)
};

// `total` whole units (cores) shared among items in proportion to their weights, at least one
// each (Hamilton's largest remainders; with fewer units than items, one each).
std::vector<long> share_in_proportion(const std::vector<double>& weights, long total);

// Reads the description and every target's data (checked; nothing fitted, nothing written).
// Throws InputError for a broken description (file, line, key); a broken target is skipped.
std::vector<CatalogTarget> read_catalog(const CatalogSettings& settings);

// The model configuration of a folder's target, its data in `data_files` (one per usable file,
// in order) and the shared keys (global lines of the description, then its own overrides).
std::string catalog_target_config(const CatalogTarget& target, const std::vector<std::string>& data_files,
                                  const std::vector<ConfigEntry>& shared);

// The whole run: report, configurations, fits (each target's run file resumed where it stopped;
// a target with its result file is not fitted again), summary (CSV and HDF5). Resumable at any
// moment: a catalog run killed and started again redoes no finished target.
CatalogOutcome run_catalog(const CatalogSettings& settings, const CatalogCallbacks& callbacks = {});

}  // namespace swarmfit
