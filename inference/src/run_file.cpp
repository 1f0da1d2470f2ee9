#include "swarmfit/inference/run_file.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "swarmfit/inference/moves/half_update.hpp"

namespace swarmfit {

using h5::Handle;

namespace {
// Debian's HDF5 is built without thread safety: threads that fit targets side by side (swarmfit
// catalog --jobs) read and write their run files one at a time.
std::mutex& hdf5_mutex() {
  static std::mutex m;
  return m;
}
// The variable-length strings of a run file (parameter names, units, priors, string attributes)
// live in HDF5's global heap, where libhdf5 1.10.8 crashes or loops on a damaged file
// (tests/fuzz/README.md, findings/fuzz_run_file): a child process reads them first, and a fault
// there refuses the file in one line instead of taking the command down.
void refuse_if_the_library_fails(const std::string& path) {
  constexpr int kSeconds = 20;  // the strings of a sound run file read in milliseconds
  const std::string failure = h5::run_isolated(
      [&] {
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
        Handle h5(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path);
        if (H5Lexists(h5, "parameters", H5P_DEFAULT) > 0) {
          Handle g(H5Gopen2(h5, "parameters", H5P_DEFAULT), "parameters");
          for (const char* name : {"names", "units", "priors"})
            if (h5::exists(g, name)) h5::read_strings(g, name);
        }
        std::vector<std::string> names;
        hsize_t index = 0;
        auto collect = [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
          static_cast<std::vector<std::string>*>(out)->push_back(name);
          return 0;
        };
        H5Aiterate2(h5, H5_INDEX_NAME, H5_ITER_INC, &index, collect, &names);
        for (const std::string& name : names) {
          Handle attr(H5Aopen(h5, name.c_str(), H5P_DEFAULT), name);
          Handle type(H5Aget_type(attr), name);
          if (H5Tget_class(type) == H5T_STRING) h5::read_string_attributes(h5, name);
        }
      },
      kSeconds);
  if (!failure.empty())
    throw std::runtime_error(path + ": damaged HDF5 file: the HDF5 library " + failure + " reading its strings");
}

// state/gradient_surrogate (gradient_force = surrogate): per temperature level the quadratic
// surrogate's arrays, Eigen's column-major data as row-major [level][column][row]; `present` 0 where
// a level has none (zeros).
void write_surrogates(hid_t state, const std::vector<QuadraticSurrogate>& levels, hsize_t d) {
  long m = 0;
  for (const QuadraticSurrogate& q : levels)
    if (!q.empty()) m = q.residuals.size();
  if (levels.empty() || m == 0) return;
  Handle g(H5Gcreate2(state, "gradient_surrogate", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "gradient_surrogate");
  const hsize_t k = levels.size(), rows = static_cast<hsize_t>(m);
  std::vector<long> present(k, 0);
  std::vector<double> centre(k * d, 0.0), factor(k * d * d, 0.0), residuals(k * rows, 0.0), jacobian(k * d * rows, 0.0),
      hessian(k * d * d * rows, 0.0), slope(k * d, 0.0);
  auto put = [](const Eigen::MatrixXd& from, std::vector<double>& to, hsize_t level) {
    std::copy(from.data(), from.data() + from.size(), to.begin() + static_cast<long>(level * from.size()));
  };
  for (hsize_t l = 0; l < k; ++l) {
    const QuadraticSurrogate& q = levels[l];
    if (q.empty()) continue;
    present[l] = 1;
    put(q.centre, centre, l);
    put(q.factor, factor, l);
    put(q.residuals, residuals, l);
    put(q.jacobian, jacobian, l);
    put(q.hessian, hessian, l);
    put(q.slope, slope, l);
  }
  h5::write(g, "present", {k}, present.data());
  h5::write(g, "centre", {k, d}, centre.data());
  h5::write(g, "factor", {k, d, d}, factor.data());
  h5::write(g, "residuals", {k, rows}, residuals.data());
  h5::write(g, "jacobian", {k, d, rows}, jacobian.data());
  h5::write(g, "hessian", {k, d, d * rows}, hessian.data());
  h5::write(g, "slope", {k, d}, slope.data());
}

// Every shape is checked against the walkers (d, at most columns / 2 levels) and against one
// another before anything is read, so a damaged header allocates nothing; the sampler checks the
// values (finite, a lower-triangular factor) and the rows against the model.
std::vector<QuadraticSurrogate> read_surrogates(hid_t state, long d, std::size_t temperatures) {
  Handle g(H5Gopen2(state, "gradient_surrogate", H5P_DEFAULT), "gradient_surrogate");
  const std::vector<hsize_t> r = h5::dataset_dims(g, "residuals");
  const hsize_t D = static_cast<hsize_t>(d);
  // Residual rows (data points) far beyond any fit's, and at most 2^27 values (1 GiB) in all the
  // levels' second derivatives: the products below cannot overflow.
  constexpr hsize_t kMaxRows = hsize_t{1} << 20, kMaxValues = hsize_t{1} << 27;
  if (r.size() != 2 || r[0] != temperatures || r[1] < 1 || r[1] > kMaxRows || D < 1 || D > 4096)
    throw std::runtime_error("state/gradient_surrogate/residuals is not [level][rows], a level per temperature");
  const hsize_t k = r[0], m = r[1];
  if (D * D > kMaxValues || D * D * m > kMaxValues || D * D * m * k > kMaxValues)
    throw std::runtime_error("state/gradient_surrogate: implausibly large (" + std::to_string(m) + " residual rows)");
  const std::vector<std::pair<const char*, std::vector<hsize_t>>> shapes = {
      {"present", {k}},        {"centre", {k, D}},         {"factor", {k, D, D}},
      {"jacobian", {k, D, m}}, {"hessian", {k, D, D * m}}, {"slope", {k, D}}};
  for (const auto& [name, dims] : shapes) {
    if (h5::dataset_dims(g, name) != dims)
      throw std::runtime_error(std::string("state/gradient_surrogate/") + name + " does not match " +
                               std::to_string(k) + " levels, " + std::to_string(d) + " parameters and " +
                               std::to_string(m) + " residual rows");
    // A dataset declared but not stored (chunks never written) would be read as fill values.
    hsize_t count = 1;
    for (hsize_t n : dims) count *= n;
    Handle set(H5Dopen2(g, name, H5P_DEFAULT), name);
    if (H5Dget_storage_size(set) < count * (std::string(name) == "present" ? sizeof(long) : sizeof(double)))
      throw std::runtime_error(std::string("state/gradient_surrogate/") + name + " is not stored in full");
  }
  const std::vector<long> present = h5::read_longs(g, "present");
  const std::vector<double> centre = h5::read_doubles(g, "centre"), factor = h5::read_doubles(g, "factor"),
                            residuals = h5::read_doubles(g, "residuals"), jacobian = h5::read_doubles(g, "jacobian"),
                            hessian = h5::read_doubles(g, "hessian"), slope = h5::read_doubles(g, "slope");
  std::vector<QuadraticSurrogate> out(k);
  const long M = static_cast<long>(m);
  for (hsize_t l = 0; l < k; ++l) {
    if (present[l] != 0 && present[l] != 1) throw std::runtime_error("state/gradient_surrogate/present is not 0 or 1");
    if (!present[l]) continue;
    QuadraticSurrogate& q = out[l];
    q.centre = Eigen::Map<const Eigen::VectorXd>(centre.data() + l * D, d);
    q.factor = Eigen::Map<const Eigen::MatrixXd>(factor.data() + l * D * D, d, d);
    q.residuals = Eigen::Map<const Eigen::VectorXd>(residuals.data() + l * m, M);
    q.jacobian = Eigen::Map<const Eigen::MatrixXd>(jacobian.data() + l * D * m, M, d);
    q.hessian = Eigen::Map<const Eigen::MatrixXd>(hessian.data() + l * D * D * m, d * M, d);
    q.slope = Eigen::Map<const Eigen::VectorXd>(slope.data() + l * D, d);
    if (!q.centre.allFinite() || !q.factor.allFinite() || !q.residuals.allFinite() || !q.jacobian.allFinite() ||
        !q.hessian.allFinite() || !q.slope.allFinite() || !q.factor.isLowerTriangular(0.0) ||
        !(q.factor.diagonal().minCoeff() > 0))
      throw std::runtime_error("state/gradient_surrogate: level " + std::to_string(l) +
                               " is not finite or its factor not lower triangular with a positive diagonal");
  }
  return out;
}

}  // namespace

void write_run(const std::string& path, const RunRecord& run, const std::function<void(hid_t)>& extra) {
  const std::lock_guard<std::mutex> lock(hdf5_mutex());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  h5::AtomicFile file(path);
  {
    Handle h5(H5Fcreate(file.partial_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), path + ": create");
    const Chain& c = run.chain;
    const hsize_t draws = c.num_draws(), walkers = c.num_walkers, d = c.num_parameters;
    {
      Handle g(H5Gcreate2(h5, "chain", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "chain");
      h5::write(g, "parameters", {draws, walkers, d}, c.parameters.data());
      std::vector<std::string> free_names;
      for (int k : run.free) free_names.push_back(run.names[k]);
      Handle set(H5Dopen2(g, "parameters", H5P_DEFAULT), "chain/parameters");
      h5::attribute(set, "names", free_names);
      h5::write(g, "log_prior", {draws, walkers}, c.log_prior.data());
      h5::write(g, "log_likelihood", {draws, walkers}, c.log_likelihood.data());
      std::vector<double> posterior(c.log_prior.size());
      for (std::size_t k = 0; k < posterior.size(); ++k) posterior[k] = c.log_prior[k] + c.log_likelihood[k];
      h5::write(g, "log_posterior", {draws, walkers}, posterior.data());
      h5::write(g, "status", {draws, walkers}, c.status.data());
      h5::write(g, "accepted", {draws, walkers}, c.accepted.data());
      h5::write(g, "generation", {draws}, c.generation.data());
    }
    {
      Handle g(H5Gcreate2(h5, "parameters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "parameters");
      h5::write_strings(g, "names", run.names);
      h5::write_strings(g, "units", run.units);
      std::vector<std::string> priors;
      for (const Prior& p : run.priors) priors.push_back(p.text());
      h5::write_strings(g, "priors", priors);
      h5::write(g, "values", {static_cast<hsize_t>(run.values.size())}, run.values.data());
      h5::write(g, "free", {static_cast<hsize_t>(run.free.size())}, run.free.data());
    }
    {
      const DemcmcState& s = run.state;
      Handle g(H5Gcreate2(h5, "state", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "state");
      const hsize_t columns = s.walkers.cols(), rows = s.walkers.rows();
      // Eigen is column-major: column k of the walker matrix is row k of [column][parameter].
      h5::write(g, "walkers", {columns, rows}, s.walkers.data());
      h5::write(g, "log_prior", {columns}, s.log_prior.data());
      h5::write(g, "log_likelihood", {columns}, s.log_likelihood.data());
      h5::write(g, "status", {columns}, s.status.data());
      h5::write(g, "accepted", {columns}, s.accepted.data());
      h5::write(g, "swaps_accepted", {static_cast<hsize_t>(s.swaps_accepted.size())}, s.swaps_accepted.data());
      h5::attribute(g, "generation", s.generation);
      h5::attribute(g, "gradient_scale", s.gradient_scale);
      h5::attribute(g, "gradient_length", s.gradient_length);
      if (!s.gradient_metric.empty()) {  // [level][column][row] of each covariance; zeros where a level has none
        const hsize_t levels = s.gradient_metric.size();
        std::vector<double> metric(levels * rows * rows, 0.0);
        for (hsize_t k = 0; k < levels; ++k)
          if (s.gradient_metric[k].size() == static_cast<long>(rows * rows))
            std::copy(s.gradient_metric[k].data(), s.gradient_metric[k].data() + rows * rows,
                      metric.begin() + static_cast<long>(k * rows * rows));
        h5::write(g, "gradient_metric", {levels, rows, rows}, metric.data());
      }
      write_surrogates(g, s.gradient_surrogate, rows);
    }
    const DemcmcSettings& st = run.settings;
    h5::attribute(h5, "seed", static_cast<long>(st.seed));
    h5::attribute(h5, "gamma_scale", st.differential_evolution.gamma_scale);
    h5::attribute(h5, "gamma_one_every", static_cast<long>(st.differential_evolution.gamma_one_every));
    h5::attribute(h5, "jitter", st.differential_evolution.jitter);
    h5::attribute(h5, "snooker", st.snooker.probability);
    h5::attribute(h5, "kde", st.kde.probability);
    h5::attribute(h5, "kde_components", static_cast<long>(st.kde.components));
    h5::attribute(h5, "kde_bandwidth", st.kde.bandwidth);
    h5::attribute(h5, "gradient", st.gradient.probability);
    h5::attribute(h5, "gradient_steps", static_cast<long>(st.gradient.steps));
    h5::attribute(h5, "gradient_step", st.gradient.step_size);
    h5::attribute(h5, "gradient_whole", static_cast<long>(st.gradient.whole));
    h5::attribute(h5, "gradient_surrogate", static_cast<long>(st.gradient.surrogate));
    h5::attribute(h5, "temperatures", st.temperatures);
    h5::attribute(h5, "thin", run.thin);
    h5::attribute(h5, "walkers", static_cast<long>(c.num_walkers));
    for (const auto& [key, value] : run.attributes) h5::attribute(h5, key, value);
    if (extra) extra(h5);
    h5::check(H5Fflush(h5, H5F_SCOPE_GLOBAL), path + ": flush");
  }
  file.commit();
}

namespace {

// A damaged file (cut, edited, half-copied) must not give made-up numbers or hang a reader: every
// shape agrees with the parameter list and every stored state is finite.
void check_consistent(const RunRecord& run) {
  const std::size_t n = run.names.size();
  if (n == 0 || run.units.size() != n || run.priors.size() != n || run.values.size() != n)
    throw std::runtime_error("/parameters: names, units, priors and values differ in length");
  for (std::size_t k = 0; k < run.free.size(); ++k)
    if (run.free[k] < 0 || static_cast<std::size_t>(run.free[k]) >= n || (k > 0 && run.free[k] <= run.free[k - 1]))
      throw std::runtime_error("/parameters/free: not increasing indices of the parameters");
  const Chain& c = run.chain;
  const std::size_t d = static_cast<std::size_t>(run.free.size());
  if (static_cast<std::size_t>(c.num_parameters) != d)
    throw std::runtime_error("/chain/parameters has " + std::to_string(c.num_parameters) + " columns for " +
                             std::to_string(d) + " free parameters");
  const std::size_t cells = c.generation.size() * static_cast<std::size_t>(c.num_walkers);
  if (c.log_likelihood.size() != cells || c.status.size() != cells || c.accepted.size() != cells)
    throw std::runtime_error("/chain datasets differ in length");
  for (std::size_t k = 0; k < c.parameters.size(); ++k)
    if (!std::isfinite(c.parameters[k]))
      throw std::runtime_error("/chain/parameters: draw " + std::to_string(k / d / c.num_walkers) + ", walker " +
                               std::to_string(k / d % c.num_walkers) + ", column " + std::to_string(k % d) +
                               " is not a finite number");
  for (std::size_t k = 0; k < cells; ++k)
    if (std::isnan(c.log_likelihood[k]) || std::isnan(c.log_prior[k]))
      throw std::runtime_error("/chain: draw " + std::to_string(k / c.num_walkers) + ", walker " +
                               std::to_string(k % c.num_walkers) + ": ln L or ln prior is NaN");
  for (std::size_t k = 1; k < c.generation.size(); ++k)
    if (c.generation[k] <= c.generation[k - 1]) throw std::runtime_error("/chain/generation is not increasing");
  const DemcmcState& st = run.state;
  if (static_cast<std::size_t>(st.walkers.rows()) != d && st.walkers.size() > 0)
    throw std::runtime_error("/state/walkers has " + std::to_string(st.walkers.rows()) + " parameters for " +
                             std::to_string(d) + " free parameters");
  const std::size_t columns = static_cast<std::size_t>(st.walkers.cols());
  if (static_cast<std::size_t>(st.log_prior.size()) != columns ||
      static_cast<std::size_t>(st.log_likelihood.size()) != columns || st.status.size() != columns)
    throw std::runtime_error("/state datasets differ in length");
  if (!st.walkers.allFinite()) throw std::runtime_error("/state/walkers: a value is not a finite number");
  if (st.log_likelihood.hasNaN() || st.log_prior.hasNaN())
    throw std::runtime_error("/state: a walker's ln L or ln prior is NaN");
  if (run.thin < 1) throw std::runtime_error("attribute thin < 1");
  if (st.generation < 0) throw std::runtime_error("/state: generation < 0");
}

}  // namespace

RunRecord read_run(const std::string& path) {
  const std::lock_guard<std::mutex> lock(hdf5_mutex());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  refuse_if_the_library_fails(path);
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) throw std::runtime_error(path + ": cannot open as HDF5");
  Handle h5(id);
  RunRecord run;
  try {
    {
      Handle g(H5Gopen2(h5, "parameters", H5P_DEFAULT), "group /parameters");
      run.names = h5::read_strings(g, "names");
      run.units = h5::read_strings(g, "units");
      for (const std::string& p : h5::read_strings(g, "priors")) run.priors.push_back(parse_prior(p));
      run.values = h5::read_doubles(g, "values");
      run.free = h5::read_ints(g, "free");
    }
    Chain& c = run.chain;
    {
      Handle g(H5Gopen2(h5, "chain", H5P_DEFAULT), "group /chain");
      std::vector<hsize_t> dims;
      c.parameters = h5::read_doubles(g, "parameters", &dims);
      if (dims.size() != 3) throw std::runtime_error("chain/parameters is not [draw][walker][parameter]");
      c.num_walkers = static_cast<int>(dims[1]);
      c.num_parameters = static_cast<int>(dims[2]);
      c.log_prior = h5::read_doubles(g, "log_prior");
      c.log_likelihood = h5::read_doubles(g, "log_likelihood");
      if (H5Lexists(g, "log_posterior", H5P_DEFAULT) <= 0) throw std::runtime_error("missing dataset 'log_posterior'");
      c.status = h5::read_ints(g, "status");
      c.accepted = h5::read_longs(g, "accepted");
      c.generation = h5::read_longs(g, "generation");
      if (c.generation.size() != dims[0] || c.log_prior.size() != dims[0] * dims[1])
        throw std::runtime_error("chain datasets differ in length");
    }
    {
      DemcmcState& s = run.state;
      Handle g(H5Gopen2(h5, "state", H5P_DEFAULT), "group /state");
      std::vector<hsize_t> dims;
      const std::vector<double> w = h5::read_doubles(g, "walkers", &dims);
      if (dims.size() != 2) throw std::runtime_error("state/walkers is not [column][parameter]");
      s.walkers = Eigen::Map<const Eigen::MatrixXd>(w.data(), static_cast<long>(dims[1]), static_cast<long>(dims[0]));
      const std::vector<double> lp = h5::read_doubles(g, "log_prior"), ll = h5::read_doubles(g, "log_likelihood");
      s.log_prior = Eigen::Map<const Eigen::VectorXd>(lp.data(), static_cast<long>(lp.size()));
      s.log_likelihood = Eigen::Map<const Eigen::VectorXd>(ll.data(), static_cast<long>(ll.size()));
      s.status = h5::read_ints(g, "status");
      s.accepted = h5::read_longs(g, "accepted");
      s.swaps_accepted = h5::read_longs(g, "swaps_accepted");
      s.generation = h5::read_long_attribute(g, "generation");
      if (H5Aexists(g, "gradient_scale") > 0) {  // runs written before the gradient move have none
        s.gradient_scale = h5::read_double_attribute(g, "gradient_scale");
        if (!(s.gradient_scale > 0) || !std::isfinite(s.gradient_scale))
          throw std::runtime_error("state/gradient_scale is not a positive number");
      }
      if (H5Aexists(g, "gradient_length") > 0) {  // runs written before its adaptation have none
        s.gradient_length = h5::read_double_attribute(g, "gradient_length");
        if (!(s.gradient_length >= 0) || !std::isfinite(s.gradient_length))
          throw std::runtime_error("state/gradient_length is not a number >= 0");
      }
      if (H5Lexists(g, "gradient_metric", H5P_DEFAULT) > 0) {  // gradient_whole runs only
        dims = h5::dataset_dims(g, "gradient_metric");
        const long d = s.walkers.rows();
        // A level per temperature, each of at least two walkers (the temperatures are read below;
        // the sampler checks the count against them), checked before the read: no allocation a
        // hostile header asks for.
        if (dims.size() != 3 || d < 1 || dims[0] < 1 || dims[0] > static_cast<hsize_t>(s.walkers.cols()) / 2 ||
            dims[1] != static_cast<hsize_t>(d) || dims[2] != static_cast<hsize_t>(d))
          throw std::runtime_error("state/gradient_metric is not [level][d][d]");
        const std::vector<double> metric = h5::read_doubles(g, "gradient_metric", &dims);
        for (hsize_t k = 0; k < dims[0]; ++k) {
          Eigen::MatrixXd f = Eigen::Map<const Eigen::MatrixXd>(metric.data() + k * d * d, d, d);
          if (!f.allFinite()) throw std::runtime_error("state/gradient_metric is not finite");
          // All zeros: the level had none; any other must be a covariance (the sampler keeps only
          // positive-definite ones), checked here so a resume refuses it before any work.
          if (!f.isZero(0.0) && !is_covariance_matrix(f, d))
            throw std::runtime_error("state/gradient_metric: level " + std::to_string(k) +
                                     " is not a symmetric positive-definite matrix");
          s.gradient_metric.push_back(f.isZero(0.0) ? Eigen::MatrixXd() : f);
        }
      }
      if (H5Lexists(g, "gradient_surrogate", H5P_DEFAULT) > 0)  // gradient_force = surrogate runs only
        s.gradient_surrogate =
            read_surrogates(g, s.walkers.rows(), h5::read_double_attributes(h5, "temperatures").size());
    }
    DemcmcSettings& st = run.settings;
    st.seed = static_cast<std::uint64_t>(h5::read_long_attribute(h5, "seed"));
    st.differential_evolution.gamma_scale = h5::read_double_attribute(h5, "gamma_scale");
    st.differential_evolution.gamma_one_every = static_cast<int>(h5::read_long_attribute(h5, "gamma_one_every"));
    st.differential_evolution.jitter = h5::read_double_attribute(h5, "jitter");
    st.snooker.probability = h5::read_double_attribute(h5, "snooker");
    if (H5Aexists(h5, "kde") > 0) {  // runs written before the KDE move have none
      st.kde.probability = h5::read_double_attribute(h5, "kde");
      st.kde.components = static_cast<int>(h5::read_long_attribute(h5, "kde_components"));
      st.kde.bandwidth = h5::read_double_attribute(h5, "kde_bandwidth");
    }
    if (H5Aexists(h5, "gradient") > 0) {  // runs written before the gradient move have none
      st.gradient.probability = h5::read_double_attribute(h5, "gradient");
      const long steps = h5::read_long_attribute(h5, "gradient_steps");
      st.gradient.steps = static_cast<int>(std::clamp(steps, -1L, 1001L));  // out of range: refused by the sampler
      st.gradient.step_size = h5::read_double_attribute(h5, "gradient_step");
    }
    if (H5Aexists(h5, "gradient_whole") > 0) {  // runs written before whole-population moves have none
      const long whole = h5::read_long_attribute(h5, "gradient_whole");
      if (whole != 0 && whole != 1) throw std::runtime_error("gradient_whole is not 0 or 1");
      st.gradient.whole = whole == 1;
    }
    if (H5Aexists(h5, "gradient_surrogate") > 0) {  // runs written before the surrogate force have none
      const long surrogate = h5::read_long_attribute(h5, "gradient_surrogate");
      if (surrogate != 0 && surrogate != 1) throw std::runtime_error("gradient_surrogate is not 0 or 1");
      st.gradient.surrogate = surrogate == 1;
    }
    st.temperatures = h5::read_double_attributes(h5, "temperatures");
    if (!run.state.gradient_surrogate.empty() && run.state.gradient_surrogate.size() != st.temperatures.size())
      throw std::runtime_error("state/gradient_surrogate has " + std::to_string(run.state.gradient_surrogate.size()) +
                               " levels for " + std::to_string(st.temperatures.size()) + " temperature(s)");
    if (!run.state.gradient_surrogate.empty() && !st.gradient.surrogate)
      throw std::runtime_error("state/gradient_surrogate in a run without the surrogate force");
    if (!run.state.gradient_metric.empty() && run.state.gradient_metric.size() != st.temperatures.size())
      throw std::runtime_error("state/gradient_metric has " + std::to_string(run.state.gradient_metric.size()) +
                               " levels for " + std::to_string(st.temperatures.size()) + " temperature(s)");
    if (!run.state.gradient_metric.empty() && !st.gradient.whole)
      throw std::runtime_error("state/gradient_metric in a run without whole-population gradient moves");
    run.thin = h5::read_long_attribute(h5, "thin");
    // The caller's string attributes.
    std::vector<std::string> names;
    hsize_t index = 0;
    auto collect = [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
      static_cast<std::vector<std::string>*>(out)->push_back(name);
      return 0;
    };
    h5::check(H5Aiterate2(h5, H5_INDEX_NAME, H5_ITER_INC, &index, collect, &names), "attributes");
    for (const std::string& name : names) {
      Handle attr(H5Aopen(h5, name.c_str(), H5P_DEFAULT), name);
      Handle type(H5Aget_type(attr), name);
      if (H5Tget_class(type) == H5T_STRING) run.attributes[name] = h5::read_string_attribute(h5, name);
    }
    if (H5Aexists(h5, "burn_in_draws") > 0) run.burn_in_draws = h5::read_long_attribute(h5, "burn_in_draws");
    check_consistent(run);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not a complete swarmfit run file: " + e.what());
  }
  return run;
}

std::string read_run_config(const std::string& path) {
  const std::lock_guard<std::mutex> lock(hdf5_mutex());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  try {
    refuse_if_the_library_fails(path);
    Handle f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path);
    return h5::read_string_attribute(f, "config");
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace swarmfit
