#include "swarmfit/models/model_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "swarmfit/integrators/limits.hpp"
#include "swarmfit/integrators/registry.hpp"
#include "swarmfit/models/units.hpp"
#include "swarmfit/observations/input_error.hpp"
#include "swarmfit/observations/text_table.hpp"

namespace po = boost::program_options;

namespace swarmfit {

namespace {

const std::vector<std::pair<std::string, std::string>> kPlanetKeys = {
    {"period", "osculating period at the reference epoch, days"},
    {"mass", "planet mass, Earth masses (mass_parameter = mass)"},
    {"K", "RV semi-amplitude, m/s (mass_parameter = K)"},
    {"secosw", "sqrt(e) cos(omega) (default 0)"},
    {"sesinw", "sqrt(e) sin(omega) (default 0)"},
    {"ecosw", "e cos(omega) (eccentricity_parameter = ecosw; default 0)"},
    {"esinw", "e sin(omega) (eccentricity_parameter = ecosw; default 0)"},
    {"tc", "time of conjunction, BJD_TDB (phase_parameter = tc)"},
    {"mean_anomaly", "mean anomaly at the reference epoch, degrees (phase_parameter = mean_anomaly)"},
    {"inc", "inclination, degrees (default 90: edge-on)"},
    {"node", "longitude of the ascending node, degrees (default 0)"},
};
const std::vector<std::pair<std::string, std::string>> kInstrumentKeys = {
    {"offset", "RV zero point, m/s (default: the weighted mean of the instrument's data)"},
    {"jitter", "extra RV noise in quadrature, m/s (default 0)"},
};

void check_section_keys(const ConfigSection& s, const std::vector<std::pair<std::string, std::string>>& known) {
  for (const auto& e : s.entries) {
    bool ok = false;
    for (const auto& [key, meaning] : known) ok = ok || key == e.key;
    if (!ok) {
      std::string list;
      for (const auto& [key, meaning] : known) list += (list.empty() ? "" : ", ") + key;
      throw InputError(e.origin + ": unknown key '" + e.key + "' in [" + s.type + " " + s.name + "] (known: " + list +
                       ")");
    }
  }
}

const ConfigEntry* find(const ConfigSection& s, const std::string& key) {
  for (const auto& e : s.entries)
    if (e.key == key) return &e;
  return nullptr;
}

// Overrides of section keys: KEY_NAME=value sets KEY in [planet NAME] (period_b=9.8) or
// [instrument NAME] (jitter_HARPS=2), as the parameters are named in [priors]. Taken out of
// `overrides`; the rest are global keys.
void apply_section_overrides(SectionedConfig& file, std::vector<std::string>& overrides,
                             const po::options_description& known) {
  std::vector<std::string> global;
  std::set<std::string> given;
  for (const std::string& item : overrides) {
    const auto equals = item.find('=');
    const std::string key = equals == std::string::npos ? item : item.substr(0, equals);
    ConfigSection* target = nullptr;
    std::string section_key;
    if (equals != std::string::npos && known.find_nothrow(key, false) == nullptr) {
      for (ConfigSection& section : file.sections) {
        const auto& keys = section.type == "planet" ? kPlanetKeys : kInstrumentKeys;
        if (section.type != "planet" && section.type != "instrument") continue;
        for (const auto& [name, meaning] : keys)
          if (key == name + "_" + section.name) {
            target = &section;
            section_key = name;
          }
      }
    }
    if (!target) {
      global.push_back(item);
      continue;
    }
    if (!given.insert(key).second) throw InputError("command line: key '" + key + "' given twice");
    std::string value = item.substr(equals + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t") + 1);
    const ConfigEntry entry{section_key, value, "command line (" + key + ")"};
    bool replaced = false;
    for (ConfigEntry& e : target->entries)
      if (e.key == section_key) {
        e = entry;
        replaced = true;
      }
    if (!replaced) target->entries.push_back(entry);
  }
  overrides = global;
}

}  // namespace

po::options_description model_keys() {
  po::options_description keys("Global keys (before the first [section], or key=value on the command line)");
  std::string integrators;
  for (const auto& info : integrator_registry()) integrators += (integrators.empty() ? "" : ", ") + info.name;
  keys.add_options()("star_mass", po::value<double>(), "mass of the star, Msun (required)")(
      "star_radius", po::value<double>()->default_value(1.0),
      "radius of the star, Rsun: a conjunction farther from its centre is no transit (0: any conjunction)")(
      "reference_epoch", po::value<double>(),
      "BJD_TDB at which the elements osculate; the integration starts there (required; before all data)")(
      "element_frame", po::value<std::string>()->default_value("jacobi"), "jacobi or astrocentric elements")(
      "mass_parameter", po::value<std::string>()->default_value("mass"), "mass (Earth masses) or K (m/s)")(
      "phase_parameter", po::value<std::string>()->default_value("tc"), "tc (BJD_TDB) or mean_anomaly (degrees)")(
      "eccentricity_parameter", po::value<std::string>()->default_value("secosw"),
      "secosw (sqrt(e) cos w, sqrt(e) sin w) or ecosw (e cos w, e sin w)")(
      "integrator", po::value<std::string>()->default_value("mvs"), ("integration scheme: " + integrators).c_str())(
      "time_step", po::value<double>()->default_value(0.0),
      "days (0: chosen for the integrator: the shortest period / 20 for mvs, whfast and saba4, / 100 for rkck, "
      "/ 200 for hermite, / 2000 for leapfrog, halved until the model changes by less than 0.1 data errors at "
      "half the step)")("step_choice", po::value<std::string>()->default_value("refine"),
                        "with time_step = 0: refine (the default step, halved until it passes the check) or "
                        "largest (also doubled, up to 4x, while the doubled step passes)")(
      "mvs_coordinates", po::value<std::string>()->default_value("jacobi"),
      "mvs: jacobi (drift-kick-drift, with symplectic correctors) or democratic_heliocentric")(
      "mvs_corrector", po::value<int>()->default_value(3), "mvs jacobi: symplectic corrector order: 0, 3, 5 or 7")(
      "marginalize_offsets", po::value<bool>()->default_value(false),
      "integrate the RV offsets out analytically (uniform prior) instead of fitting them")(
      "transit_likelihood", po::value<std::string>()->default_value("gaussian"), "gaussian or student")(
      "student_nu", po::value<double>()->default_value(4.0), "degrees of freedom of the Student-t likelihood")(
      "close_approach", po::value<double>()->default_value(1.0),
      "stop (ln L = -inf) when two planets come closer than this many mutual Hill radii (0: off)")(
      "rmax", po::value<double>()->default_value(100.0), "stop when a planet is farther than this from the star, AU")(
      "stability", po::value<std::string>()->default_value("none"),
      "fit: stability constraint on the proposals: none, amd (AMD-stable, Laskar & Petit 2017), hill (Hill-stable "
      "pairs, Gladman 1993), integrate (survives stability_horizon outer orbits) or megno (survives with MEGNO < "
      "stability_megno_limit); failures get ln L = -inf and status 'unstable' (README, Stability)")(
      "stability_horizon", po::value<double>()->default_value(1e3),
      "stability = integrate or megno: orbits of the outermost planet (whfast at 1/20 of the shortest pericentre "
      "passage time, as swarmfit stability)")("stability_megno_limit", po::value<double>()->default_value(3.0),
                                              "stability = megno: the largest MEGNO kept")(
      "stability_penalty", po::value<double>()->default_value(0.0),
      "0: a failed proposal gets ln L = -inf; > 0: ln L - this (a soft constraint, the draw marked unstable)")(
      "stop_on_unbound", po::value<bool>()->default_value(true), "stop when a planet becomes unbound")(
      "backend", po::value<std::string>()->default_value("cpu"), "cpu or cuda")(
      "cuda_layout", po::value<std::string>()->default_value("auto"),
      "cuda backend: the likelihood kernels' threads: system (a thread per system), body (a thread per body: "
      "mvs with jacobi coordinates) or auto (body where a launch is too small to fill the GPU a thread per "
      "system)")("reproducible", po::value<bool>()->default_value(false),
                 "cuda backend: the CPU's arithmetic (initial conditions set up on the host, kernels without FMA "
                 "contraction): bitwise the cpu backend's log-likelihoods, so the same chain, somewhat slower")(
      "threads", po::value<int>()->default_value(0), "cpu backend: OpenMP threads (0: all)");
  return keys;
}

po::options_description fit_keys() {
  po::options_description keys("Fit keys (swarmfit fit)");
  keys.add_options()("walkers", po::value<int>()->default_value(0),
                     "walkers per temperature: even, >= 2 d + 2 for d free parameters (0: 4 d rounded up to 32)")(
      "generations", po::value<long>()->default_value(5000), "generations to run (the most, with a stopping rule)")(
      "thin", po::value<long>()->default_value(1), "keep every thin-th generation")(
      "burn_in", po::value<long>()->default_value(-1),
      "generations discarded by summaries and diagnostics (-1: the first half of the run)")(
      "seed", po::value<long>()->default_value(1), "seed of the random streams (the same seed, the same chain)")(
      "output", po::value<std::string>()->default_value("fit.h5"), "HDF5 run file (also the checkpoint)")(
      "overwrite", po::value<bool>()->default_value(false), "replace an existing output file")(
      "checkpoint_every", po::value<long>()->default_value(0),
      "write the run file every this many generations (0: off)")(
      "checkpoint_seconds", po::value<double>()->default_value(60.0), "write the run file at least this often")(
      "init", po::value<std::string>()->default_value("guess"),
      "initial walkers: guess (the configuration's values with scatter) or prior (draws from the priors)")(
      "init_scatter", po::value<double>()->default_value(0.01), "init = guess: scatter, in prior standard deviations")(
      "optimize", po::value<long>()->default_value(0),
      "generations of differential-evolution optimisation before sampling (0: none)")(
      "least_squares", po::value<long>()->default_value(0),
      "then at most this many Levenberg-Marquardt steps on the residuals, the walkers drawn from its Laplace "
      "approximation (0: none)")(
      "laplace_scale", po::value<double>()->default_value(1.0),
      "least_squares: the walkers' spread in the Laplace approximation's standard deviations "
      "(> 1: over-dispersed)")(
      "ephemeris", po::value<std::string>()->default_value("osculating"),
      "osculating or mean: sample each transiting planet's period and tc as osculating elements at "
      "reference_epoch or as the mean ephemeris of its transits (needs least_squares > 0; README, Fitting)")(
      "snooker", po::value<double>()->default_value(0.1), "probability of a DE-snooker move")(
      "de_gamma", po::value<double>()->default_value(2.38),
      "DE move: gamma = de_gamma / sqrt(2 d) (ter Braak 2006's 2.38; smaller for narrow, curved posteriors)")(
      "kde", po::value<double>()->default_value(0.0),
      "probability of an independence move from a kernel density estimate of the other half")(
      "kde_components", po::value<int>()->default_value(256),
      "kernel centres of the KDE move (at most; 1: one Gaussian at the other half's mean, covariance "
      "kde_bandwidth^2 x theirs)")("kde_bandwidth", po::value<double>()->default_value(1.0),
                                   "factor on Silverman's KDE bandwidth")(
      "gradient", po::value<double>()->default_value(0.0),
      "probability that a half update is a gradient move (Hamiltonian Monte Carlo whitened by the other half; "
      "finite-difference gradients, d + 1 likelihoods per walker and leapfrog step)")(
      "gradient_steps", po::value<int>()->default_value(1),
      "leapfrog steps of a gradient move (1: MALA; 0: the trajectory length adapted in the burn-in, ChEES)")(
      "gradient_step", po::value<double>()->default_value(0.0),
      "leapfrog step of a gradient move in the other half's standard deviations (0: 1.5 d^-1/4)")(
      "gradient_population", po::value<std::string>()->default_value("halves"),
      "halves (a gradient move updates a half, whitened by the other) or whole (a generation is a gradient move "
      "of every walker at once with probability `gradient`, whitened by the whole population, its metric frozen "
      "after the burn-in: one batched call per leapfrog step instead of two)")(
      "gradient_force", po::value<std::string>()->default_value("differences"),
      "the leapfrog's force: differences (forward differences of the posterior, d + 1 likelihoods per walker and "
      "step) or surrogate (the gradient of a quadratic expansion of the residuals about the population's mean, "
      "built in the burn-in and frozen with the metric: one batched call per trajectory; needs "
      "gradient_population = whole)")("temperatures", po::value<int>()->default_value(1),
                                      "parallel tempering: number of temperatures")(
      "max_temperature", po::value<double>()->default_value(100.0), "hottest temperature (geometric ladder from 1)")(
      "rhat_target", po::value<double>()->default_value(1.01), "stopping rule: every R-hat below this ...")(
      "ess_target", po::value<double>()->default_value(0.0), "... and every bulk ESS above this (0: no stopping rule)")(
      "check_every", po::value<long>()->default_value(100),
      "generations between checks (convergence checks thin out to 1/32-1/16 of the run)")(
      "predictive_draws", po::value<int>()->default_value(50),
      "posterior draws whose model curves are stored for plots")(
      "max_run_file_gb", po::value<double>()->default_value(4.0),
      "refuse settings whose run file is estimated to be larger (GB)")(
      "progress", po::value<std::string>()->default_value("auto"),
      "progress: auto (a line updated in place on a terminal, else a line every 30 s on stderr), on or off");
  return keys;
}

std::string section_help() {
  std::string out = "Sections:\n  [planet NAME] (one per planet, from the star outwards):\n";
  for (const auto& [k, m] : kPlanetKeys) out += "    " + k + ": " + m + "\n";
  out += "  [instrument NAME] (optional, one per RV instrument):\n";
  for (const auto& [k, m] : kInstrumentKeys) out += "    " + k + ": " + m + "\n";
  out += "  [rv NAME] (RV data; NAME is the instrument unless instrument columns say otherwise):\n";
  for (const auto& [k, m] : source_keys(SourceKind::kRv)) out += "    " + k + ": " + m + "\n";
  out += "  [transits NAME] (transit times):\n";
  for (const auto& [k, m] : source_keys(SourceKind::kTransits)) out += "    " + k + ": " + m + "\n";
  out +=
      "  [priors] (swarmfit fit; one line per model parameter, e.g. period_b = uniform(19, 20)):\n"
      "    uniform(a, b), log_uniform(a, b), normal(mu, sigma), truncated_normal(mu, sigma, a, b),\n"
      "    fixed (the configuration's value) or fixed(v)\n";
  return out;
}

ModelConfig load_model_config(const std::string& path, const std::vector<std::string>& overrides, ConfigUse use) {
  ModelConfig c;
  c.path = path;
  c.file = read_sectioned_config(path);
  po::options_description known = model_keys();
  known.add(fit_keys());
  for (const auto& e : c.file.globals) {
    if (known.find_nothrow(e.key, false) == nullptr) {
      std::string message = e.origin + ": unknown key '" + e.key + "'";
      const std::string suggestion = closest_key(e.key, known);
      if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
      throw InputError(message);
    }
    c.settings[e.key] = Setting{e.value, e.origin};
  }
  std::vector<std::string> global_overrides = overrides;
  apply_section_overrides(c.file, global_overrides, known);
  apply_overrides(c.settings, global_overrides, known);
  store_settings(c.settings, known, c.vm);
  auto origin = [&](const std::string& key) {
    auto it = c.settings.find(key);
    return it == c.settings.end() ? std::string("default") : it->second.origin;
  };
  auto choice = [&](const std::string& key, std::initializer_list<const char*> allowed) {
    const std::string value = c.vm[key].as<std::string>();
    for (const char* a : allowed)
      if (value == a) return value;
    std::string list;
    for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    throw InputError(origin(key) + ": key '" + key + "': expected one of " + list + ", got '" + value + "'");
  };

  // Data first: every file is read and checked before anything runs.
  std::vector<const ConfigSection*> planets, instruments;
  std::set<std::string> section_names;
  for (const ConfigSection& s : c.file.sections) {
    if (!section_names.insert(s.type + " " + s.name).second)
      throw InputError(s.origin + ": section [" + s.type + " " + s.name + "] appears twice");
    if (is_data_section(s)) {
      if (use == ConfigUse::kModelOnly)
        throw InputError(s.origin + ": [" + s.type + " " + s.name + "]: this command takes no data sections");
      add_data_section(s, c.data);
    } else if (s.type == "planet") {
      check_section_keys(s, kPlanetKeys);
      planets.push_back(&s);
    } else if (s.type == "instrument") {
      check_section_keys(s, kInstrumentKeys);
      instruments.push_back(&s);
    } else if (s.type == "priors") {
      if (c.priors) throw InputError(s.origin + ": a second [priors] section");
      c.priors = &s;
    } else {
      throw InputError(s.origin + ": unknown section type '" + s.type +
                       "' (known: planet, instrument, rv, transits, priors)");
    }
  }
  if (use != ConfigUse::kModelOnly) c.data.finish();
  if (use == ConfigUse::kDataOnly) return c;

  if (planets.empty()) throw InputError(path + ": no [planet NAME] section");
  if (!c.vm.count("star_mass")) throw InputError(path + ": missing key 'star_mass'");
  if (!c.vm.count("reference_epoch")) throw InputError(path + ": missing key 'reference_epoch'");
  for (const ConfigSection* s : instruments)
    if (use != ConfigUse::kModelOnly && c.data.instrument_index(s->name) < 0)
      throw InputError(s->origin + ": [instrument " + s->name + "] has no RV data");

  ModelOptions options;
  options.frame = choice("element_frame", {"jacobi", "astrocentric"}) == "jacobi" ? ElementFrame::kJacobi
                                                                                  : ElementFrame::kAstrocentric;
  options.mass_from_semi_amplitude = choice("mass_parameter", {"mass", "K"}) == "K";
  options.phase_from_mean_anomaly = choice("phase_parameter", {"tc", "mean_anomaly"}) == "mean_anomaly";
  options.plain_eccentricity_vector = choice("eccentricity_parameter", {"secosw", "ecosw"}) == "ecosw";
  options.reference_epoch = c.vm["reference_epoch"].as<double>();
  if (!std::isfinite(options.reference_epoch))
    throw InputError(origin("reference_epoch") + ": key 'reference_epoch' must be finite");
  std::vector<std::string> planet_names;
  for (const ConfigSection* s : planets) planet_names.push_back(s->name);
  c.model = std::make_unique<PlanetaryModel>(planet_names, c.data.instruments, options);

  c.values.assign(c.model->num_parameters(), 0.0);
  c.values[0] = c.vm["star_mass"].as<double>();
  const char* mass_key = options.mass_from_semi_amplitude ? "K" : "mass";
  const char* phase_key = options.phase_from_mean_anomaly ? "mean_anomaly" : "tc";
  const char* ecc_x = options.plain_eccentricity_vector ? "ecosw" : "secosw";
  const char* ecc_y = options.plain_eccentricity_vector ? "esinw" : "sesinw";
  for (int p = 0; p < static_cast<int>(planets.size()); ++p) {
    const ConfigSection& s = *planets[p];
    auto value = [&](const char* key, bool required, double fallback) {
      const ConfigEntry* e = find(s, key);
      if (!e) {
        if (required) throw InputError(s.origin + ": [planet " + s.name + "] needs key '" + key + "'");
        return fallback;
      }
      return parse_config_number(*e);
    };
    const char* unused_mass = options.mass_from_semi_amplitude ? "mass" : "K";
    const char* unused_phase = options.phase_from_mean_anomaly ? "tc" : "mean_anomaly";
    for (const char* k : {unused_mass, unused_phase})
      if (const ConfigEntry* e = find(s, k))
        throw InputError(e->origin + ": key '" + k + "' does not fit mass_parameter/phase_parameter (" +
                         origin("mass_parameter") + ")");
    for (const char* k : options.plain_eccentricity_vector ? std::vector<const char*>{"secosw", "sesinw"}
                                                           : std::vector<const char*>{"ecosw", "esinw"})
      if (const ConfigEntry* e = find(s, k))
        throw InputError(e->origin + ": key '" + k + "' does not fit eccentricity_parameter = " +
                         (options.plain_eccentricity_vector ? "ecosw" : "secosw") + " (" +
                         origin("eccentricity_parameter") + ")");
    c.values[c.model->planet_parameter(p, 0)] = value("period", true, 0);
    c.values[c.model->planet_parameter(p, 1)] = value(mass_key, true, 0);
    c.values[c.model->planet_parameter(p, 2)] = value(ecc_x, false, 0);
    c.values[c.model->planet_parameter(p, 3)] = value(ecc_y, false, 0);
    c.values[c.model->planet_parameter(p, 4)] = value(phase_key, true, 0);
    c.values[c.model->planet_parameter(p, 5)] = value("inc", false, 90);
    if (const ConfigEntry* e = find(s, "inc")) {
      const double inc = c.values[c.model->planet_parameter(p, 5)];
      if (!(inc >= 0 && inc <= 180)) throw InputError(e->origin + ": key 'inc' must be 0 to 180 degrees");
    }
    c.values[c.model->planet_parameter(p, 6)] = value("node", false, 0);
  }
  for (int j = 0; j < static_cast<int>(c.data.instruments.size()); ++j) {
    double sw = 0, swv = 0;
    for (const auto& o : c.data.rv)
      if (o.instrument == j) {
        sw += 1 / (o.error * o.error);
        swv += o.rv / (o.error * o.error);
      }
    double offset = swv / sw, jitter = 0;
    for (const ConfigSection* s : instruments)
      if (s->name == c.data.instruments[j]) {
        if (const ConfigEntry* e = find(*s, "offset")) offset = parse_config_number(*e);
        if (const ConfigEntry* e = find(*s, "jitter")) jitter = parse_config_number(*e);
      }
    c.values[c.model->offset_parameter(j)] = offset;
    c.values[c.model->jitter_parameter(j)] = jitter;
  }
  std::string reason;
  std::vector<PlanetState> states;
  if (!c.model->planet_states(c.values.data(), states, &reason))
    throw InputError(path + ": the parameter values of the configuration are invalid: " + reason);

  LikelihoodSettings& L = c.likelihood;
  L.integrator = c.vm["integrator"].as<std::string>();
  if (!find_integrator(L.integrator))
    throw InputError(origin("integrator") + ": key 'integrator': unknown integrator '" + L.integrator + "'");
  L.time_step = c.vm["time_step"].as<double>();
  if (!(L.time_step >= 0) || !std::isfinite(L.time_step))
    throw InputError(origin("time_step") + ": key 'time_step' must be >= 0 and finite");
  L.step_choice = choice("step_choice", {"refine", "largest"});
  L.mvs_jacobi = choice("mvs_coordinates", {"democratic_heliocentric", "jacobi"}) == "jacobi";
  L.mvs_corrector = c.vm["mvs_corrector"].as<int>();
  if (L.mvs_corrector != 0 && L.mvs_corrector != 3 && L.mvs_corrector != 5 && L.mvs_corrector != 7)
    throw InputError(origin("mvs_corrector") + ": key 'mvs_corrector': expected 0, 3, 5 or 7");
  L.star_radius = c.vm["star_radius"].as<double>() * units::kSolarRadius;
  if (!(L.star_radius >= 0)) throw InputError(origin("star_radius") + ": key 'star_radius' must be >= 0");
  L.marginalize_offsets = c.vm["marginalize_offsets"].as<bool>();
  const double student_nu = c.vm["student_nu"].as<double>();
  if (!(student_nu > 0) || !std::isfinite(student_nu))
    throw InputError(origin("student_nu") + ": key 'student_nu' must be > 0 and finite");
  if (choice("transit_likelihood", {"gaussian", "student"}) == "student") L.student_nu = student_nu;
  L.monitors.close_approach = c.vm["close_approach"].as<double>();
  if (!(L.monitors.close_approach >= 0) || !std::isfinite(L.monitors.close_approach))
    throw InputError(origin("close_approach") + ": key 'close_approach' must be >= 0 (0: no close-encounter stop)");
  L.monitors.rmax = c.vm["rmax"].as<double>();
  if (!(L.monitors.rmax >= 0)) throw InputError(origin("rmax") + ": key 'rmax' must be >= 0 (0: off)");
  L.monitors.stop_on_unbound = c.vm["stop_on_unbound"].as<bool>();
  L.backend = choice("backend", {"cpu", "cuda"});
  L.reproducible = c.vm["reproducible"].as<bool>();
  const std::string layout = choice("cuda_layout", {"auto", "system", "body"});
  L.cuda_layout = layout == "body"     ? CudaLayout::kThreadPerBody
                  : layout == "system" ? CudaLayout::kThreadPerSystem
                                       : CudaLayout::kAuto;
  if (L.cuda_layout == CudaLayout::kThreadPerBody && (L.integrator != "mvs" || !L.mvs_jacobi))
    throw InputError(origin("cuda_layout") +
                     ": key 'cuda_layout': body needs integrator = mvs with mvs_coordinates = jacobi");
  L.threads = c.vm["threads"].as<int>();
  if (L.threads < 0 || L.threads > kMaxThreads)
    throw InputError(origin("threads") + ": key 'threads' must be 0 (all cores) to " + std::to_string(kMaxThreads));
  StabilityConstraint& S = c.stability;
  S.mode = choice("stability", {"none", "amd", "hill", "integrate", "megno"});
  S.options.horizon_orbits = c.vm["stability_horizon"].as<double>();
  if (!(S.options.horizon_orbits > 0) || !std::isfinite(S.options.horizon_orbits))
    throw InputError(origin("stability_horizon") + ": key 'stability_horizon' must be > 0");
  S.options.megno_limit = c.vm["stability_megno_limit"].as<double>();
  if (!(S.options.megno_limit > 2))
    throw InputError(origin("stability_megno_limit") + ": key 'stability_megno_limit' must be > 2");
  S.penalty = c.vm["stability_penalty"].as<double>();
  if (!(S.penalty >= 0) || !std::isfinite(S.penalty))
    throw InputError(origin("stability_penalty") + ": key 'stability_penalty' must be >= 0");
  // The fit's close-encounter limit (key close_approach, default 1 mutual Hill radius, SPOCK's
  // criterion and `swarmfit stability`'s default); 1 where the fit switched its monitor off.
  S.options.close_approach = L.monitors.close_approach > 0 ? L.monitors.close_approach : 1.0;
  S.options.backend = L.backend;
  S.options.threads = L.threads;
  if (c.vm["star_mass"].as<double>() <= 0) throw InputError(origin("star_mass") + ": key 'star_mass' must be > 0");
  if (use == ConfigUse::kModelAndData) {
    // One model integration past kMaxModelSteps (a step of 1e-12 d, a reference epoch 1e9 d
    // before the data) would run for hours: refused before the step check integrates anything.
    double min_period = 1e300, max_period = 0;
    for (int p = 0; p < c.model->num_planets(); ++p) {
      min_period = std::min(min_period, c.values[c.model->planet_parameter(p, 0)]);
      max_period = std::max(max_period, c.values[c.model->planet_parameter(p, 0)]);
    }
    const double last = c.data.rv.empty() && c.data.transits.empty() ? options.reference_epoch : c.data.last_time();
    const double duration = last - options.reference_epoch + 0.6 * max_period;
    const double step = L.time_step > 0 ? L.time_step : default_step_fraction(L.integrator) * min_period;
    const double steps = duration / step;
    if (!(steps <= kMaxModelSteps)) {
      char why[200];
      std::snprintf(why, sizeof why,
                    "one model integration would take ~%.3g steps (%.4g d from reference_epoch at "
                    "%.3g d), above %.0e",
                    steps, duration, step, kMaxModelSteps);
      const std::string key = L.time_step > 0 ? "time_step" : "reference_epoch";
      throw InputError(origin(key) + ": key '" + key + "': " + why);
    }
    c.step_check = settle_time_step(c.data, *c.model, L, c.values, origin("integrator"));
  }
  return c;
}

ParameterSpace read_priors(const ModelConfig& c) {
  const PlanetaryModel& model = *c.model;
  if (!c.priors) throw InputError(c.path + ": no [priors] section (swarmfit fit needs a prior for every parameter)");
  std::vector<Prior> priors(model.num_parameters());
  std::vector<bool> given(model.num_parameters(), false);
  std::vector<std::string> names;
  for (const auto& p : model.parameters()) names.push_back(p.name);
  for (const ConfigEntry& e : c.priors->entries) {
    const int k = model.index(e.key);
    if (k < 0) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      throw InputError(e.origin + ": [priors]: unknown parameter '" + e.key + "' (the model's: " + list + ")");
    }
    try {
      priors[k] = parse_prior(e.value);
    } catch (const std::invalid_argument& error) {
      throw InputError(e.origin + ": [priors] key '" + e.key + "': " + error.what());
    }
    given[k] = true;
  }
  for (int k = 0; k < model.num_parameters(); ++k)
    if (!given[k])
      throw InputError(c.priors->origin + ": [priors]: parameter '" + names[k] +
                       "' has no prior (give one, or 'fixed' to keep the configuration's value)");
  ParameterSpace space(names, priors, c.values);
  if (space.num_free() == 0) throw InputError(c.priors->origin + ": [priors]: every parameter is fixed");
  return space;
}

}  // namespace swarmfit
