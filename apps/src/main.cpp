// swarmfit command-line entry point: parses the subcommand and hands over; no physics here.
#include <cstring>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "errors.hpp"

namespace {

void usage(std::ostream& out) {
  out << "usage: swarmfit <command> [options]\n\n"
         "commands:\n"
         "  integrate --config FILE [key=value ...] [--reference FILE]\n"
         "                 integrate an ensemble of N-body systems (swarmfit integrate --help)\n"
         "  predict --config FILE [--params FILE] [--output DIR] [key=value ...]\n"
         "                 model RV curves and transit times (O-C) of a planetary model, as CSV\n"
         "  data --config FILE\n"
         "                 read and check the RV and transit-time data of a configuration\n"
         "  fit --config FILE [--resume] [key=value ...]\n"
         "                 DEMCMC fit of a planetary model to RV and transit-time data (HDF5 run file)\n"
         "  summary RUN.h5   posterior summary table (median, 16/84%, R-hat, ESS) of a fit\n"
         "  plot RUN.h5 [--output DIR] [--corner REGEX]\n"
         "                 PNGs of a fit: RVs and transit-time O-C with model draws, corner, traces\n"
         "  simulate --config TRUTH --output DIR --span DAYS [options]\n"
         "                 synthetic RVs and transit times from a model's parameter values\n"
         "  stability RUN.h5 [--horizon ORBITS] [--draws N] [--output FILE.csv]\n"
         "                 integrate posterior draws for a horizon: survival, MEGNO, AMD and Hill criteria\n"
         "  map --config FILE --x NAME:LO:HI:N --y NAME:LO:HI:N [--horizon ORBITS] [--png FILE]\n"
         "                 MEGNO and survival over a grid of two parameters of a model\n"
         "  catalog --config FILE --output DIR [--targets A,B] [--check] [key=value ...]\n"
         "                 fit every target of a catalog into its own run file; one summary of them all\n"
         "  nbody --config FILE [--resume] [key=value ...]\n"
         "                 one large N-body system (block-step Hermite 4/6, CPU or GPU, MPI): snapshots and a log\n"
         "  pm --config FILE [--resume] [key=value ...]\n"
         "                 particle-mesh gravity (FFT or multigrid Poisson, leapfrog): snapshots, density, a log\n"
         "  bench [options]  run the benchmarks B1-B5 of design/BENCHMARKS.md (swarmfit bench --help)\n"
         "  --version        print the version\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "swarmfit: error: command line: no command (swarmfit --help lists them)\n";
    return swarmfit::app::kExitBadInput;
  }
  const std::string command = argv[1];
  try {
    if (command == "integrate") return swarmfit::app::integrate_command(argc - 1, argv + 1);
    if (command == "bench") return swarmfit::app::bench_command(argc - 1, argv + 1);
    if (command == "predict") return swarmfit::app::predict_command(argc - 1, argv + 1);
    if (command == "data") return swarmfit::app::data_command(argc - 1, argv + 1);
    if (command == "fit") return swarmfit::app::fit_command(argc - 1, argv + 1);
    if (command == "summary") return swarmfit::app::summary_command(argc - 1, argv + 1);
    if (command == "plot") return swarmfit::app::plot_command(argc - 1, argv + 1);
    if (command == "simulate") return swarmfit::app::simulate_command(argc - 1, argv + 1);
    if (command == "stability") return swarmfit::app::stability_command(argc - 1, argv + 1);
    if (command == "map") return swarmfit::app::map_command(argc - 1, argv + 1);
    if (command == "catalog") return swarmfit::app::catalog_command(argc - 1, argv + 1);
    if (command == "nbody") return swarmfit::app::nbody_command(argc - 1, argv + 1);
    if (command == "pm") return swarmfit::app::pm_command(argc - 1, argv + 1);
    if (command == "--version") {
      std::cout << "swarmfit " << SWARMFIT_VERSION << "\n";
      return 0;
    }
    if (command == "--help" || command == "-h" || command == "help") {
      usage(std::cout);
      return 0;
    }
    std::cerr << "swarmfit: error: command line: unknown command '" << command << "' (swarmfit --help lists them)\n";
    return swarmfit::app::kExitBadInput;
  } catch (const swarmfit::app::InputError& e) {
    std::cerr << "swarmfit: error: " << e.what() << "\n";
    return swarmfit::app::kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "swarmfit: failed: " << e.what() << "\n";
    return 1;
  }
}
