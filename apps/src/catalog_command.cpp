// `swarmfit catalog`: many targets fitted by the fit pipeline, one summary (models/catalog.hpp) from
// the command line: the description and overrides read, every target checked before any fit,
// a line per target as it finishes, SIGINT and SIGTERM turned into "save the fit in progress
// and stop" (exit 128 + the signal; the same command continues).
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>

#include "commands.hpp"
#include "config.hpp"
#include "errors.hpp"
#include "swarmfit/models/catalog.hpp"
#ifdef SWARMFIT_WITH_MPI
#include "mpi_work.hpp"
#endif

namespace po = boost::program_options;

namespace swarmfit::app {

int catalog_command(int argc, char** argv) {
  po::options_description options("Options");
  CatalogSettings s;
  std::string targets;
  bool check = false, no_report = false;
  double pack_wait_ms = 50;
  options.add_options()("help,h", "show this help")(
      "config", po::value<std::string>(&s.description),
      "catalog description: folder = DIR and planets = FILE (a Systemic-format catalog), [target NAME] sections, "
      "shared model and fit keys")("output", po::value<std::string>(&s.output),
                                   "results folder: report.txt, targets/NAME/{fit.cfg, run.h5, result.csv}, "
                                   "summary.csv, summary.h5")("targets", po::value<std::string>(&targets),
                                                              "fit only these targets (comma-separated names)")(
      "max-targets", po::value<long>(&s.max_targets), "only the first N targets")(
      "jobs", po::value<int>(&s.jobs),
      "targets fitted at once (threads; each fit keeps its own `threads`): on a GPU their launches share the card")(
      "pack", po::value<std::string>(&s.pack),
      "auto, on or off: the batches of the targets fitted at once share launches (auto: with --jobs > 1 on "
      "backend=cuda)")("pack-wait", po::value<double>(&pack_wait_ms),
                       "packed: ms a round of launches waits for a fit busy on the host (default 50)")(
      "host-targets", po::value<int>(&s.host_targets),
      "backend=cuda: the N targets with the longest integration of one system are fitted on the host's CPU cores "
      "instead (sharing them), the GPU fitting the rest (default 0)")(
      "check", po::bool_switch(&check), "read and check every target, write the report and configurations; no fit")(
      "no-report", po::bool_switch(&no_report), "no browser report (OUTPUT/report/index.html) at the end");
  po::variables_map vm;
  parse_command_line(argc, argv, options, &s.overrides, vm);
  if (vm.count("help")) {
    std::cout << "usage: swarmfit catalog --config FILE --output DIR [--targets A,B] [--max-targets N] [--jobs N] "
                 "[--pack auto|on|off] [--pack-wait MS] [--host-targets N] [--check] "
                 "[key=value ...]\n"
              << options
              << "\nThe key=value overrides apply to every target (fit and model keys, as `swarmfit "
                 "fit`). Run again to continue: finished targets are kept, a fit in progress resumes.\n";
    return 0;
  }
  if (s.description.empty()) throw InputError("command line: --config FILE is required");
  if (s.output.empty()) throw InputError("command line: --output DIR is required");
  if (vm.count("max-targets") && s.max_targets <= 0) throw InputError("command line: --max-targets must be > 0");
  s.check_only = check;
  if (!(pack_wait_ms >= 0 && pack_wait_ms <= 10000))
    throw InputError("command line: --pack-wait must be 0 to 10000 ms");
  s.pack_wait = pack_wait_ms / 1e3;
  std::stringstream names(targets);
  for (std::string name; std::getline(names, name, ',');) {
    if (name.empty()) throw InputError("command line: --targets '" + targets + "' has an empty name");
    s.only.push_back(name);
  }
  if (vm.count("targets") && s.only.empty()) throw InputError("command line: --targets is empty");
  // Targets fitted at once launch on as many CUDA streams; the driver maps streams onto 8
  // hardware queues by default, where a short launch queued behind a long one waits for it
  // (CUDA C++ Programming Guide, "Implicit Synchronization"). 32 is the most; set before CUDA
  // starts (MpiWork picks the rank's device); a value in the environment is kept.
  if (s.jobs > 1) setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  std::string who;
#ifdef SWARMFIT_WITH_MPI
  // Under mpirun: targets shared out by cost (packed) or handed out by rank 0 to whichever rank
  // asks; rank 0 writes the report, the configurations and the summary.
  MpiWork mpi(nullptr, nullptr);
  if (mpi.active()) {
    s.primary = mpi.rank() == 0;
    s.rank = mpi.rank();
    s.ranks = mpi.size();
    s.local_ranks = mpi.local_size();
    s.next_target = [&mpi](long count) { return mpi.next(count); };
    s.barrier = [&mpi] { mpi.barrier(); };
    who = "rank " + std::to_string(mpi.rank()) + ": ";
  }
#endif
  catch_stop_signals();
  CatalogCallbacks callbacks;
  callbacks.message = [&who](const std::string& line) { std::cout << "  " << who << line << std::endl; };
  callbacks.should_stop = [] { return stop_signal() != 0; };
  const CatalogOutcome r = run_catalog(s, callbacks);
#ifdef SWARMFIT_WITH_MPI
  if (r.interrupted && mpi.active()) {
    std::cout << "  " << who << "interrupted (signal " << stop_signal() << "): the same command continues\n"
              << std::flush;
    mpi.abort(128 + stop_signal());
  }
#endif
  if (!s.check_only)
    std::cout << "  " << who << r.fitted << " fitted now, " << r.reused << " kept from before, " << r.failed
              << " failed" << std::endl;
  if (r.interrupted) {
    std::cout << "  interrupted (signal " << stop_signal() << "): the same command continues\n";
    return 128 + stop_signal();
  }
  if (!s.primary) return 0;  // rank 0 reports the whole catalog
  long skipped = 0;
  for (const CatalogTarget& t : r.targets) skipped += !t.skip.empty();
  std::cout << "swarmfit catalog: " << r.targets.size() << " targets, " << skipped << " skipped (" << s.output
            << "/report.txt says why)";
  if (s.check_only) {
    std::cout << "; checked only\n";
    return 0;
  }
  std::map<std::string, long> planets;  // the summary's planet rows by status
  for (const CatalogResult& row : r.results)
    if (!row.planet.empty()) ++planets[row.status.substr(0, row.status.find(':'))];
  std::cout << "; planets:";
  for (const auto& [status, count] : planets) std::cout << " " << count << " " << status << ",";
  std::cout << " in " << s.output << "/summary.csv and summary.h5\n" << std::flush;
  if (!no_report) {  // the browser report: apps/python/swarmfit_catalog_report.py (matplotlib, h5py)
    const std::string command = "python3 '" SWARMFIT_PYTHON_DIR "/swarmfit_catalog_report.py' '" + s.output + "' > '" +
                                s.output + "/report.log' 2>&1";
    if (std::system(command.c_str()) == 0)
      std::cout << "  report: " << s.output << "/report/index.html\n";
    else
      std::cout << "  no browser report (python3 with h5py and matplotlib is needed): " << s.output
                << "/report.log says why\n";
  }
  return 0;
}

}  // namespace swarmfit::app
