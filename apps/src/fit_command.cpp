// `swarmfit fit`: the fit pipeline (models/fit.hpp) from the command line: the configuration and
// its key=value overrides read, the progress line on stderr, SIGINT and SIGTERM turned into "save
// the state and stop" (exit 128 + the signal), and the result and posterior table printed.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <iomanip>
#include <iostream>

#include "commands.hpp"
#include "config.hpp"
#include "errors.hpp"
#include "swarmfit/models/fit.hpp"
#ifdef SWARMFIT_WITH_MPI
#include "mpi_work.hpp"
#endif

namespace po = boost::program_options;

namespace swarmfit::app {

namespace {

struct CommandLine {
  std::string config;
  bool resume = false, help = false;
  std::vector<std::string> overrides;
};

CommandLine parse_fit(int argc, char** argv) {
  po::options_description options("Options");
  CommandLine c;
  options.add_options()("help,h", "show this help")("config", po::value<std::string>(&c.config),
                                                    "configuration file (model, priors, data, fit keys)")(
      "resume", po::bool_switch(&c.resume), "continue the run in the output file (start it if there is none)");
  po::variables_map vm;
  parse_command_line(argc, argv, options, &c.overrides, vm);
  if (vm.count("help")) {
    std::cout << "usage: swarmfit fit --config FILE [--resume] [key=value ...]\n"
              << options << "\n"
              << key_help("Fit keys (key=value on the command line, key = value in the file)", fit_keys()) << "\n"
              << key_help("Global keys (before the first [section], or key=value on the command line)", model_keys())
              << "\n"
              << section_help();
    c.help = true;
    return c;
  }
  if (c.config.empty()) throw InputError("command line: --config FILE is required");
  return c;
}

std::string format_duration(double seconds) {
  char buffer[64];
  if (seconds < 60)
    std::snprintf(buffer, sizeof buffer, "%.0fs", seconds);
  else if (seconds < 3600)
    std::snprintf(buffer, sizeof buffer, "%dm%02ds", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
  else
    std::snprintf(buffer, sizeof buffer, "%dh%02dm", static_cast<int>(seconds) / 3600,
                  (static_cast<int>(seconds) % 3600) / 60);
  return buffer;
}

// The progress text of one report (the optimisation's or the sampling's).
void print_progress_text(const RunProgress& p, const char* before, const char* after) {
  if (p.phase == RunProgress::Phase::kOptimize)
    std::fprintf(stderr, "%s  optimise: generation %ld/%ld, best ln posterior %.4f%s", before, p.generation,
                 p.generations, p.best_log_posterior, after);
  else
    std::fprintf(stderr, "%s  generation %ld/%ld  acceptance %.3f  worst R-hat %.4f  min ESS %.0f  ETA %s%s", before,
                 p.generation, p.generations, p.acceptance, p.worst_rhat, p.min_ess,
                 format_duration(p.eta_seconds).c_str(), after);
}

// On a terminal: one line, updated in place.
void print_progress(const RunProgress& p) {
  print_progress_text(p, "\r", "   ");
  if (p.finished) std::fprintf(stderr, "\n");
}

// Output not on a terminal (a log file, a batch job): whole lines, at most one every 30 s and at
// the end of each phase, so that a log shows the fit moving without a line per generation.
void print_progress_lines(const RunProgress& p) {
  static auto last = std::chrono::steady_clock::time_point{};
  static RunProgress::Phase last_phase = RunProgress::Phase::kSample;
  const auto now = std::chrono::steady_clock::now();
  if (!p.finished && p.phase == last_phase && now - last < std::chrono::seconds(30)) return;
  last = now;
  last_phase = p.phase;
  print_progress_text(p, "", "\n");
}

}  // namespace

int fit_command(int argc, char** argv) {
  const CommandLine cl = parse_fit(argc, argv);
  if (cl.help) return 0;
  const ModelConfig c = load_model_config(cl.config, cl.overrides);
  FitSettings s = read_fit_settings(c);
  s.resume = cl.resume;
#ifdef SWARMFIT_WITH_MPI
  // Under mpirun: every rank runs the same sampler and evaluates its share of each batch; rank 0
  // alone writes and prints. A signal stops all ranks at the same generation.
  MpiWork mpi(nullptr, nullptr);
  if (mpi.active()) {
    s.sharing.rank = mpi.rank();
    s.sharing.size = mpi.size();
    s.sharing.gather = [&mpi](std::vector<double>& values, std::vector<int>& codes) { mpi.gather(values, codes); };
    s.sharing.gather_blocks = [&mpi](std::vector<double>& values, long block) { mpi.gather_blocks(values, block); };
    if (mpi.rank() != 0) std::cout.setstate(std::ios::failbit);  // (quiet: rank 0 speaks for all)
  }
  auto stop_requested = [&mpi] { return mpi.any(stop_signal() != 0); };
#else
  auto stop_requested = [] { return stop_signal() != 0; };
#endif
  FitCallbacks callbacks;
  callbacks.started = [&](const FitStart& f) {
    catch_stop_signals();
    std::cout << "swarmfit fit: " << f.free_parameters << " free parameters, " << f.walkers << " walkers x "
              << f.temperatures << " temperature(s), " << f.rv_points << " RVs, " << f.transit_times
              << " transit times, integrator " << f.integrator << " step " << f.time_step << " d, backend " << f.backend
              << std::endl;
    std::cout << "  integration  " << f.step_check.describe() << std::endl;
    if (!f.step_check.passed() && s.sharing.rank == 0)
      std::cerr << "swarmfit: warning: the step is too large for these data at the configuration's values ("
                << f.step_check.describe() << "): set a smaller time_step" << std::endl;
    if (f.resumed)
      std::cout << "  resumed at generation " << f.generation << " (" << f.draws << " draws kept)" << std::endl;
    else if (s.resume)
      std::cout << "  --resume: no " << s.output << " yet, starting" << std::endl;
  };
  if ((s.progress == "on" || (s.progress == "auto" && isatty(STDERR_FILENO))) && s.sharing.rank == 0)
    callbacks.progress = print_progress;
  else if (s.progress == "auto" && s.sharing.rank == 0)
    callbacks.progress = print_progress_lines;
  callbacks.should_stop = stop_requested;
  const FitResult r = run_fit(c, s, callbacks);
  if (r.interrupted && !r.state_saved) {
    std::cout << "  interrupted (signal " << stop_signal() << ") in the start phase; nothing written: the same command "
              << "starts again from the beginning\n";
    return 128 + stop_signal();
  }
  if (r.interrupted) {
    std::cout << "  interrupted (signal " << stop_signal() << ") at generation " << r.generation << "; state saved in "
              << s.output << ": continue with --resume\n";
    return 128 + stop_signal();
  }

  if (r.least_squares_ran)
    std::cout << "  least squares: " << r.run.attributes.at("least_squares") << "; start phase " << std::setprecision(4)
              << r.timing.start << " s" << std::setprecision(6) << "\n";
  std::cout << "  " << r.generation << " generations in " << format_duration(r.timing.total) << ", acceptance "
            << r.acceptance;
  for (std::size_t k = 0; k < r.swap_fractions.size(); ++k)
    std::cout << ", swaps " << k << "-" << k + 1 << " " << r.swap_fractions[k];
  if (r.walkers_reset > 0) std::cout << ", " << r.walkers_reset << " outlier walkers reset in the burn-in";
  std::cout << (r.converged ? ", converged" : "") << "\n";
  const FitTiming& t = r.timing;
  std::cout << "  sampling " << std::setprecision(4) << t.sampling << " s: likelihood calls " << t.likelihood << " s";
  if (t.gpu_device > 0) std::cout << " (GPU kernels " << t.gpu_kernels << " s, device total " << t.gpu_device << " s)";
  std::cout << ", convergence checks " << t.checks << " s, checkpoints " << t.checkpoints << " s, sampler and the rest "
            << t.sampling - t.likelihood - t.checks - t.checkpoints << " s\n"
            << std::setprecision(6);
  // An answer that may be wrong says so: in the log (stdout), on the terminal (stderr) and in the
  // run file (attributes stopping_rule and integration_check_best).
  std::cout << "  stopping rule " << r.stopping_rule << "\n";
  if (!r.converged_enough && s.sharing.rank == 0)
    std::cerr << "swarmfit: warning: not converged (" << r.stopping_rule << "): continue with --resume "
              << "generations=N (a larger N), or do not trust these intervals\n";
  if (r.best_step_check.done) {
    std::cout << "  integration at the best draw: " << r.best_step_check.describe() << "\n";
    if (!r.best_step_check.passed() && s.sharing.rank == 0)
      std::cerr << "swarmfit: warning: the step is too large for these data at the best draw ("
                << r.best_step_check.describe() << "): fit again with a smaller time_step\n";
  }
  if (!r.summary.empty()) {
    std::cout << "  posterior (" << r.run.chain.num_draws() - r.first_draw << " draws x " << r.run.chain.num_walkers
              << " walkers after the burn-in):\n";
    print_summary(std::cout, r.summary);
    std::cout << "  wrote " << s.output << " and " << r.summary_csv << "; plots: swarmfit plot " << s.output << "\n";
  } else {
    std::cout << "  wrote " << s.output << " (too few draws after the burn-in for a summary)\n";
  }
  return 0;
}

}  // namespace swarmfit::app
