// `swarmfit summary RUN.h5` (the posterior table of a run file, models/fit_summary.hpp) and
// `swarmfit plot RUN.h5` (the plotting script, apps/python/swarmfit_plot.py).
#include <unistd.h>

#include <boost/program_options.hpp>
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
  long burn_in = -1;
  options.add_options()("help,h", "show this help")("run", po::value<std::string>(&path), "run file (HDF5)")(
      "burn-in", po::value<long>(&burn_in)->default_value(-1), "generations to discard (-1: the first half)")(
      "csv", po::value<std::string>(&csv), "also write the table as CSV here");
  po::variables_map vm;
  parse_command_line_with_file(argc, argv, options, "run", vm);
  if (vm.count("help")) {
    std::cout << "usage: swarmfit summary RUN.h5 [--burn-in G] [--csv FILE]\n" << options;
    return 0;
  }
  if (path.empty()) throw InputError("command line: the run file is required (swarmfit summary RUN.h5)");
  RunRecord run;
  try {
    run = read_run(path);
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
  const long first = first_kept_draw(run.chain, burn_in);
  const std::unique_ptr<PlanetaryModel> model = model_from_attributes(run.attributes);
  std::cout << path << ": " << run.chain.num_draws() << " draws x " << run.chain.num_walkers << " walkers, generation "
            << run.state.generation << ", seed " << run.settings.seed << "; summary of draws " << first << " to "
            << run.chain.num_draws() - 1 << "\n";
  const std::vector<SummaryRow> rows = summarize_fit(run, model.get(), first);
  print_summary(std::cout, rows);
  const AcceptanceSummary acceptance = summarize_acceptance(run.chain, first);
  std::cout << "  acceptance after the burn-in: mean " << acceptance.mean << ", lowest walker " << acceptance.lowest
            << "\n";
  if (!csv.empty()) write_summary_csv(csv, rows);
  return 0;
}

int plot_command(int argc, char** argv) {
  std::vector<std::string> args = {"python3", SWARMFIT_PYTHON_DIR "/swarmfit_plot.py"};
  for (int k = 1; k < argc; ++k) args.push_back(argv[k]);
  std::vector<char*> raw;
  for (auto& a : args) raw.push_back(a.data());
  raw.push_back(nullptr);
  execvp(raw[0], raw.data());
  throw std::runtime_error("cannot run python3 (needed by swarmfit plot)");
}

}  // namespace swarmfit::app
