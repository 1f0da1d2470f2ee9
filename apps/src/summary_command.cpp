// `swarmfit summary RUN.h5` (the posterior table of a run file, models/fit_summary.hpp) and
// `swarmfit plot RUN.h5` (the plotting script, apps/python/swarmfit_plot.py).
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "config.hpp"
#include "errors.hpp"
#include "swarmfit/models/fit_summary.hpp"

namespace po = boost::program_options;

namespace swarmfit::app {

int summary_command(int argc, char** argv) {
  po::options_description options("Options");
  std::string path, csv;
  bool overwrite = false;
  long burn_in = -2;
  options.add_options()("help,h", "show this help")("run", po::value<std::string>(&path), "run file (HDF5)")(
      "burn-in", po::value<long>(&burn_in),
      "generations to discard (-1: the first half; default: the fit's own burn-in, as its closing table)")(
      "csv", po::value<std::string>(&csv), "also write the table as CSV here")("overwrite", po::bool_switch(&overwrite),
                                                                               "replace the --csv file if it exists");
  po::variables_map vm;
  parse_command_line_with_file(argc, argv, options, "run", vm);
  if (vm.count("help")) {
    std::cout << "usage: swarmfit summary RUN.h5 [--burn-in G] [--csv FILE [--overwrite]]\n" << options;
    return 0;
  }
  if (path.empty()) throw InputError("command line: the run file is required (swarmfit summary RUN.h5)");
  RunRecord run;
  try {
    run = read_run(path);
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
  if (vm.count("burn-in") && burn_in < -1)
    throw InputError("command line: --burn-in must be -1 (the first half) or >= 0");
  if (vm.count("csv")) check_output_path(csv, "--csv");
  if (!csv.empty() && std::filesystem::exists(csv) && !overwrite)
    throw InputError("command line: --csv " + csv + " exists (add --overwrite to replace it)");
  // The fit's own burn-in unless told otherwise, so that this table is the fit's closing table.
  const bool own = !vm.count("burn-in") && run.burn_in_draws >= 0;
  const long first = own ? std::min(run.burn_in_draws, run.chain.num_draws()) : first_kept_draw(run.chain, burn_in);
  const std::string which = own                   ? "the fit's burn-in"
                            : vm.count("burn-in") ? "--burn-in " + std::to_string(burn_in)
                                                  : "the first half: the run file records no burn-in";
  const std::unique_ptr<PlanetaryModel> model = model_from_attributes(run.attributes);
  std::cout << path << ": " << run.chain.num_draws() << " draws x " << run.chain.num_walkers << " walkers, generation "
            << run.state.generation << ", seed " << run.settings.seed << "; summary of draws " << first << " to "
            << run.chain.num_draws() - 1 << " (" << which << ")\n";
  if (run.chain.num_draws() - first < 4)
    throw InputError(path + ": " + std::to_string(run.chain.num_draws() - first) +
                     " draws after the burn-in: too few for a summary");
  const std::vector<SummaryRow> rows = summarize_fit(run, model.get(), first);
  print_summary(std::cout, rows);
  const AcceptanceSummary acceptance = summarize_acceptance(run.chain, first);
  std::cout << "  acceptance after the burn-in: mean " << acceptance.mean << ", lowest walker " << acceptance.lowest
            << "\n";
  if (!csv.empty()) write_summary_csv(csv, rows);
  return 0;
}

int plot_command(int argc, char** argv) {
  // The plots are drawn by a Python script, which replaces this process.
  auto run_script = [&](const char* script) {
    std::vector<std::string> args = {"python3", std::string(SWARMFIT_PYTHON_DIR "/") + script};
    for (int k = 1; k < argc; ++k) args.push_back(argv[k]);
    std::vector<char*> raw;
    for (auto& a : args) raw.push_back(a.data());
    raw.push_back(nullptr);
    execvp(raw[0], raw.data());
    throw std::runtime_error("cannot run python3 (needed by swarmfit plot)");
  };
  // The run file is checked here as summary checks it (shapes, finite values), before Python
  // starts: a damaged file is one line and exit 2, never a traceback.
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (a == "--output" || a == "--burn-in" || a == "--snapshot" || a == "--corner") {
      ++k;
      continue;
    }
    if (a.empty() || a[0] == '-') continue;
    // An output folder of `swarmfit nbody` (log.csv, snapshots): its own plots.
    if (std::filesystem::is_directory(a) && std::filesystem::exists(a + "/log.csv"))
      run_script("swarmfit_nbody_plot.py");
    try {
      read_run(a);
    } catch (const std::exception& e) {
      throw InputError(e.what());
    }
    break;
  }
  run_script("swarmfit_plot.py");
  return 2;  // not reached: run_script replaces the process or throws
}

}  // namespace swarmfit::app
