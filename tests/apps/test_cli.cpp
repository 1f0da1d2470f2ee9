// The swarmfit command as a user meets it: bad input is refused before any work with one line
// naming file/line/key, exit code 2 and no output file left behind; the Swarm-NG test mode
// (--reference) passes on its own output and fails, naming the worst system, on a perturbed one.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "swarmfit/inference/hdf5_io.hpp"
#include "swarmfit/inference/run_file.hpp"

namespace {

namespace fs = std::filesystem;

// Two numeric columns (0-based) of every row of a CSV file with a header line, as pairs.
std::vector<std::pair<double, double>> csv_column_pairs(const fs::path& path, int a, int b) {
  std::vector<std::pair<double, double>> rows;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    rows.emplace_back(std::stod(f.at(a)), std::stod(f.at(b)));
  }
  return rows;
}

struct Result {
  int exit_code;
  std::string out, err;
};

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("swarmfit_cli_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  Result run(const std::string& args) {
    const std::string out = (dir_ / "stdout").string(), err = (dir_ / "stderr").string();
    const std::string command = std::string(SWARMFIT_BINARY) + " " + args + " >" + out + " 2>" + err;
    const int status = std::system(command.c_str());
    auto slurp = [](const std::string& p) {
      std::ifstream in(p);
      return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    };
    return Result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }
  // Exit 2, exactly one line on stderr containing `needle`, and nothing written in the folder.
  void expect_refused(const Result& r, const std::string& needle) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      EXPECT_TRUE(name == "stdout" || name == "stderr" || name.find(".cfg") != std::string::npos ||
                  name.find("ic.csv") != std::string::npos || name.rfind("in_", 0) == 0)
          << "left behind: " << name;
    }
  }
  // A copy of run file `source` as `name` in the folder, edited by `python` (h5py as f, numpy as np).
  std::string edited_copy(const std::string& source, const std::string& name, const std::string& python) {
    const std::string path = (dir_ / name).string();
    fs::copy_file(source, path);
    const std::string command =
        "python3 -c \"import h5py, numpy as np\nf = h5py.File('" + path + "', 'r+')\n" + python + "\nf.close()\"";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    return path;
  }
  // Starts the command in a child process (stdout to `log`, stderr discarded); returns its pid.
  pid_t spawn(const std::vector<std::string>& args, const std::string& log = "/dev/null") {
    const pid_t pid = fork();
    if (pid == 0) {
      std::freopen(log.c_str(), "w", stdout);
      std::freopen("/dev/null", "w", stderr);
      std::vector<std::string> copy = args;
      std::vector<char*> argv = {const_cast<char*>(SWARMFIT_BINARY)};
      for (auto& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(SWARMFIT_BINARY, argv.data());
      _exit(127);
    }
    return pid;
  }
  std::string out_args() {
    return "output=" + (dir_ / "run.h5").string() + " output_csv=" + (dir_ / "run.csv").string();
  }
  fs::path dir_;
};

TEST_F(Cli, UnknownKeySuggestsTheClosest) {
  const std::string cfg = write("a.cfg", "integrator = mvs\n# comment\ndestination_tme = 2\n");
  expect_refused(run("integrate --config " + cfg + " " + out_args()),
                 "a.cfg:3: unknown key 'destination_tme' (did you mean 'destination_time'?)");
  expect_refused(run("integrate time_stepp=1e-3 " + out_args()),
                 "command line: unknown key 'time_stepp' (did you mean 'time_step'?)");
}

TEST_F(Cli, MalformedNumbersNameFileLineAndKey) {
  const std::string cfg = write("b.cfg", "nsys = 4\ntime_step = 1e-3x\n");
  expect_refused(run("integrate --config " + cfg + " " + out_args()),
                 "b.cfg:2: key 'time_step': invalid value '1e-3x'");
  const std::string nan_cfg = write("c.cfg", "time_step = nan\n");
  expect_refused(run("integrate --config " + nan_cfg + " " + out_args()), "c.cfg:1: key 'time_step': must be finite");
  expect_refused(run("integrate time_step=-1 " + out_args()), "command line: key 'time_step': must be positive");
  const std::string no_equals = write("d.cfg", "integrator hermite\n");
  expect_refused(run("integrate --config " + no_equals + " " + out_args()), "d.cfg:1: expected 'key = value'");
}

TEST_F(Cli, BadInitialConditionsAreRefused) {
  const std::string header = "system,body,mass,x,y,z,vx,vy,vz\n";
  const std::string star = "0,0,1,0,0,0,0,0,0\n";
  auto ic = [&](const std::string& rows) { return write("ic.csv", header + rows); };
  expect_refused(run("integrate initial_conditions=" + ic(star + "0,1,-1e-3,1,0,0,0,1,0\n") + " " + out_args()),
                 "ic.csv:3: column 'mass': negative mass");
  expect_refused(run("integrate initial_conditions=" + ic(star) + " " + out_args()), "fewer than 2 bodies");
  expect_refused(run("integrate initial_conditions=" + ic(star + "0,1,1e-3,inf,0,0,0,1,0\n") + " " + out_args()),
                 "ic.csv:3: column 'x': not a finite number: 'inf'");
  expect_refused(run("integrate initial_conditions=" + ic(star + "0,1,1e-3,1,0,0,abc,1,0\n") + " " + out_args()),
                 "ic.csv:3: column 'vx': not a number: 'abc'");
  expect_refused(run("integrate initial_conditions=" + ic(star + "0,1,1e-3,1,0,0\n") + " " + out_args()),
                 "ic.csv:3: expected 9 fields, found 6");
  expect_refused(run("integrate initial_conditions=" + (dir_ / "missing.csv").string() + " " + out_args()),
                 "missing.csv: cannot open the file");
  expect_refused(run("integrate --config " + (dir_ / "missing.cfg").string()),
                 "missing.cfg: cannot open the configuration file");
  expect_refused(run("integrate nbod=1 " + out_args()), "key 'nbod': must be between 2 and 16");
  expect_refused(run("integrate integrator=euler " + out_args()), "key 'integrator': unknown integrator 'euler'");
  expect_refused(run("integrate cuda_layout=warp " + out_args()), "key 'cuda_layout': must be auto, system or body");
}

TEST_F(Cli, RunsWritesOutputsAndPassesItsOwnReference) {
  const Result r =
      run("integrate integrator=mvs nsys=40 nbod=4 destination_time=2 snapshot_interval=0.5 " + out_args());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("status         ok 40"), std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(dir_ / "run.h5"));
  ASSERT_TRUE(fs::exists(dir_ / "run.csv"));
  const std::string reference = (dir_ / "run.csv").string();
  const Result same = run("integrate integrator=mvs nsys=40 nbod=4 destination_time=2 --reference " + reference);
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("match"), std::string::npos) << same.out;
  // A different step gives different final states: the comparison fails and names a system.
  const Result other =
      run("integrate integrator=mvs nsys=40 nbod=4 destination_time=2 time_step=2e-3 --reference " + reference);
  EXPECT_EQ(other.exit_code, 3) << other.out << other.err;
  EXPECT_NE(other.out.find("MISMATCH"), std::string::npos) << other.out;
  EXPECT_NE(other.out.find("worst system"), std::string::npos) << other.out;
}

// A planetary model with RV and transit-time data (self-contained: the data are written here).
class ModelCli : public Cli {
 protected:
  std::string data_config(const std::string& extra_global = "", const std::string& rv_extra = "",
                          const std::string& planet_extra = "") {
    std::string rv = "# time rv error\n";
    for (int k = 0; k < 20; ++k) rv += std::to_string(2455001.5 + 7.3 * k) + " " + std::to_string(3 * k % 7) + " 2.0\n";
    write("in_rv.txt", rv);
    std::string transits = "epoch,time,error\n";
    for (int k = 0; k < 10; ++k)
      transits += std::to_string(k) + "," + std::to_string(2455003.0 + 10.0 * k) + ",0.001\n";
    write("in_transits.csv", transits);
    return write("model.cfg", "star_mass = 1.0\nreference_epoch = 2455000.0\n" + extra_global +
                                  "\n[planet b]\nperiod = 10.0\nmass = 20\ntc = 2455003.0\n" + planet_extra +
                                  "\n[rv HARPS]\nfile = in_rv.txt\ncolumns = time rv rv_error\n" + rv_extra +
                                  "\n[transits b]\nfile = in_transits.csv\nformat = csv\nheader = yes\n"
                                  "columns = epoch time error\nplanet = b\n");
  }
};

TEST_F(ModelCli, PredictWritesCurvesAndTransitTimes) {
  const std::string config = data_config();
  const std::string out = (dir_ / "predicted").string();
  const Result r = run("predict --config " + config + " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" ok "), std::string::npos) << r.out;
  for (const char* file : {"rv_data.csv", "rv_curve.csv", "transits.csv"})
    EXPECT_TRUE(fs::exists(dir_ / "predicted" / file));
  std::ifstream transits(dir_ / "predicted" / "transits.csv");
  std::string header, first;
  std::getline(transits, header);
  std::getline(transits, first);
  EXPECT_EQ(header,
            "set,planet,epoch,time_observed,error,time_model,residual_minutes,oc_observed_minutes,oc_model_minutes");
  EXPECT_EQ(first.rfind("0,b,0,2455003,", 0), 0u) << first;
  // Many parameter sets at once.
  const std::string params = write("in_params.csv", "period_b,mass_b\n10.0,20\n10.001,25\n9.999,15\n");
  const Result again = run("predict --config " + config + " --params " + params + " --output " + out);
  EXPECT_EQ(again.exit_code, 2) << again.err;  // the earlier files are kept
  EXPECT_NE(again.err.find("has rv_data.csv (add --overwrite to replace)"), std::string::npos) << again.err;
  const Result many = run("predict --config " + config + " --params " + params + " --output " + out + " --overwrite");
  ASSERT_EQ(many.exit_code, 0) << many.err;
  EXPECT_NE(many.out.find("3 parameter set(s)"), std::string::npos) << many.out;
  // The (e cos w, e sin w) basis: e = 0.25 as ecosw = 0.25 predicts what secosw = 0.5 predicts.
  const std::string ecc_out = (dir_ / "predicted_ecosw").string();
  const Result plain = run("predict --config " + data_config("eccentricity_parameter = ecosw\n", "", "ecosw = 0.25\n") +
                           " --output " + ecc_out);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const Result root =
      run("predict --config " + data_config("", "", "secosw = 0.5\n") + " --output " + out + " --overwrite");
  ASSERT_EQ(root.exit_code, 0) << root.err;
  auto slurp = [](const fs::path& f) {
    std::ifstream in(f);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(slurp(dir_ / "predicted_ecosw" / "transits.csv"), slurp(dir_ / "predicted" / "transits.csv"));
  EXPECT_EQ(slurp(dir_ / "predicted_ecosw" / "rv_curve.csv"), slurp(dir_ / "predicted" / "rv_curve.csv"));
  const Result data = run("data --config " + config);
  ASSERT_EQ(data.exit_code, 0) << data.err;
  EXPECT_NE(data.out.find("HARPS: 20 points"), std::string::npos) << data.out;
  EXPECT_NE(data.out.find("planet b: 10 transits"), std::string::npos) << data.out;
}

TEST_F(ModelCli, BadModelInputIsRefusedBeforeAnyWork) {
  const std::string out = " --output " + (dir_ / "predicted").string();
  expect_refused(run("predict --config " + data_config("", "", "eccentricity = 0.1\n") + out),
                 "model.cfg:8: unknown key 'eccentricity' in [planet b]");
  expect_refused(run("predict --config " + data_config("star_mas = 1\n") + out),
                 "unknown key 'star_mas' (did you mean 'star_mass'?)");
  expect_refused(run("predict --config " + data_config("", "rv_unit = furlongs\n") + out),
                 "key 'rv_unit': expected m/s or km/s");
  expect_refused(run("predict --config " + data_config("", "", "secosw = 1.1\n") + out),
                 "invalid: e of b = secosw^2 + sesinw^2 must be < 1");
  expect_refused(run("predict --config " + data_config("", "", "ecosw = 0.1\n") + out),
                 "model.cfg:8: key 'ecosw' does not fit eccentricity_parameter = secosw");
  expect_refused(run("predict --config " + data_config("eccentricity_parameter = ecosw\n", "", "sesinw = 0.1\n") + out),
                 "key 'sesinw' does not fit eccentricity_parameter = ecosw");
  expect_refused(run("predict --config " +
                     data_config("eccentricity_parameter = ecosw\n", "", "ecosw = 0.9\nesinw = 0.5\n") + out),
                 "invalid: e of b = |(ecosw, esinw)| must be < 1");
  expect_refused(run("predict --config " + data_config() + out + " reference_epoch=2455010"), "in_rv.txt:2: RV time");
  expect_refused(run("predict --config " + data_config() + out + " integrator=euler"),
                 "key 'integrator': unknown integrator 'euler'");
  expect_refused(run("predict --config " + data_config() + out + " --params " + write("in_bad.csv", "period_z\n3\n")),
                 "in_bad.csv:1: unknown parameter 'period_z'");
  write("in_rv.txt", "2455001 1.0 -2.0\n");
  const std::string config = (dir_ / "model.cfg").string();
  expect_refused(run("data --config " + config), "in_rv.txt:1: column 'rv_error': an error must be > 0");
  write("in_extra.cfg", "[moon x]\nfile = a\n");
  expect_refused(run("data --config " + (dir_ / "in_extra.cfg").string()),
                 "in_extra.cfg:1: unknown section type 'moon'");
}

}  // namespace

namespace {

// `swarmfit fit` on the bundled demo data, made small.
class FitCli : public Cli {
 protected:
  // The demo configuration with its data paths made absolute and `edit` applied to its text.
  std::string fit_config(const std::function<std::string(std::string)>& edit = {}) {
    std::ifstream in(std::string(SWARMFIT_SOURCE_DIR) + "/examples/demo/fit.cfg");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string data = "file = " + std::string(SWARMFIT_SOURCE_DIR) + "/examples/demo/data/";
    for (std::size_t at; (at = text.find("file = data/")) != std::string::npos;)
      text.replace(at, std::string("file = data/").size(), data);
    return write("fit.cfg", edit ? edit(text) : text);
  }
  static std::string replace(std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
  }
  // A small fit's keys; `extra` (" key=value ...") replaces defaults of the same key (a key given
  // twice on the command line is refused).
  std::string small(const std::string& output, const std::string& extra = "") {
    std::vector<std::pair<std::string, std::string>> keys = {{"output", (dir_ / output).string()},
                                                             {"generations", "40"},
                                                             {"walkers", "32"},
                                                             {"optimize", "10"},
                                                             {"ess_target", "0"},
                                                             {"progress", "off"},
                                                             {"checkpoint_seconds", "1000"}};
    std::istringstream words(extra);
    for (std::string word; words >> word;) {
      const std::string key = word.substr(0, word.find('='));
      keys.erase(std::remove_if(keys.begin(), keys.end(), [&](const auto& k) { return k.first == key; }), keys.end());
    }
    std::string text;
    for (const auto& [key, value] : keys) text += " " + key + "=" + value;
    return text + extra;
  }
  // Runs the command in a child process and kills it with SIGKILL after `delay_ms` (if still
  // running). Returns the exit code, or -1 when it was killed.
  int run_and_kill(const std::vector<std::string>& args, int delay_ms, const std::string& log) {
    const pid_t pid = spawn(args, log);
    int status = 0;
    for (int waited = 0; waited < delay_ms; waited += 5) {
      if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
      usleep(5000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  static void expect_same_chain(const swarmfit::RunRecord& a, const swarmfit::RunRecord& b) {
    EXPECT_EQ(a.chain.generation, b.chain.generation);
    EXPECT_TRUE(a.chain.parameters == b.chain.parameters);
    EXPECT_TRUE(a.chain.log_likelihood == b.chain.log_likelihood);
    EXPECT_TRUE(a.chain.log_prior == b.chain.log_prior);
    EXPECT_EQ(a.chain.status, b.chain.status);
    EXPECT_EQ(a.chain.accepted, b.chain.accepted);
    EXPECT_EQ((a.state.walkers - b.state.walkers).cwiseAbs().maxCoeff(), 0.0);
  }
};

TEST_F(FitCli, BadInputIsOneLineExitTwoAndNoOutput) {
  const std::string out = small("run.h5");
  expect_refused(
      run("fit --config " + fit_config([](std::string t) { return replace(t, "walkers = 48", "walkers 48"); }) + out),
      "fit.cfg:10: expected 'key = value'");
  expect_refused(run("fit --config " +
                     fit_config([](std::string t) { return replace(t, "uniform(9.7, 9.9)", "uniform(9.7)"); }) + out),
                 "[priors] key 'period_b': prior 'uniform(9.7)': uniform takes 2 arguments");
  expect_refused(run("fit --config " +
                     fit_config([](std::string t) { return replace(t, "mass_c = uniform(0.5, 300)\n", ""); }) + out),
                 "parameter 'mass_c' has no prior");
  expect_refused(run("fit --config " + fit_config([](std::string t) { return t + "mass_d = uniform(1, 2)\n"; }) + out),
                 "unknown parameter 'mass_d'");
  const std::string out_without_walkers = replace(out, " walkers=32", "");
  expect_refused(run("fit --config " + fit_config() + out_without_walkers + " walkers=20"),
                 "key 'walkers' must be even and at least 26 for 12 free parameters");
  expect_refused(run("fit --config " + fit_config() + out_without_walkers + " walkers=33"),
                 "key 'walkers' must be even");
  expect_refused(run("fit --config " + fit_config() + out + " walkers=34"), "command line: key 'walkers' given twice");
  expect_refused(run("fit --config " +
                     fit_config([](std::string t) { return replace(t, "transits_c.txt", "transits_x.txt"); }) + out),
                 "transits_x.txt");
  expect_refused(
      run("fit --config " +
          fit_config([](std::string t) { return replace(t, "uniform(9.7, 9.9)", "uniform(9.85, 9.9)"); }) + out),
      "the configuration's value of period_b (9.800000) is outside its prior");
  expect_refused(run("fit --config " + fit_config() + out + " init=random"), "key 'init' expected guess or prior");
  const std::string out_without_output = replace(out, " output=" + (dir_ / "run.h5").string(), "");
  expect_refused(
      run("fit --config " + fit_config() + out_without_output + " output=" + (dir_ / "no/such/run.h5").string()),
      "does not exist");
  write("in_existing.h5", "x");
  expect_refused(
      run("fit --config " + fit_config() + out_without_output + " output=" + (dir_ / "in_existing.h5").string()),
      "exists (use --resume");
}

// Killed with SIGKILL at random moments and resumed each time, a run ends with the chain of an
// uninterrupted run with the same seed, bitwise; the run file is readable after every kill.
TEST_F(FitCli, KilledAtRandomAndResumedGivesTheSameChain) {
  const std::string config = fit_config();
  const std::string length = " generations=150 checkpoint_every=3";
  const Result reference = run("fit --config " + config + small("reference.h5", length));
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  const swarmfit::RunRecord expected = swarmfit::read_run((dir_ / "reference.h5").string());
  ASSERT_EQ(expected.state.generation, 150);

  const std::string path = (dir_ / "killed.h5").string();
  std::vector<std::string> args = {"fit", "--config", config, "--resume"};
  std::istringstream words(small("killed.h5", length));
  for (std::string w; words >> w;) args.push_back(w);
  swarmfit::CounterRandom random(20261122);
  // The machine's speed and load are unknown: a chain that finished after fewer than 3 kills is
  // checked and started again with half the delays; an attempt that made no progress (a loaded
  // machine) lengthens the next ones. Either way the test cannot starve.
  int kills = 0, resumed = 0, scale = 16, attempt = 0;
  for (int chain = 0; chain < 8 && (kills < 3 || resumed < 2); ++chain, scale = std::max(1, scale / 2)) {
    fs::remove(path);
    kills = resumed = 0;
    long last_generation = -1;
    int stalled = 0, code = -1;
    for (int tries = 0; tries < 200 && code != 0; ++tries, ++attempt) {
      const int delay = (2 + static_cast<int>(random.below(20, swarmfit::RandomPurpose::kTest, attempt, 0, 0))) *
                        scale * (1 + stalled);
      const std::string log = (dir_ / ("attempt" + std::to_string(attempt) + ".log")).string();
      code = run_and_kill(args, delay, log);
      std::ifstream in(log);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      resumed += text.find("resumed at generation") != std::string::npos;
      if (code == -1) {
        ++kills;
        long generation = -1;
        if (fs::exists(path))
          EXPECT_NO_THROW(generation = swarmfit::read_run(path).state.generation) << "unreadable after kill " << kills;
        stalled = generation > last_generation ? 0 : stalled + 1;
        last_generation = std::max(last_generation, generation);
      } else {
        ASSERT_EQ(code, 0) << text;
      }
    }
    ASSERT_EQ(code, 0);
    expect_same_chain(expected, swarmfit::read_run(path));
  }
  EXPECT_GE(kills, 3);
  EXPECT_GE(resumed, 2);
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().string().find(".partial."), std::string::npos) << "left behind: " << entry.path();
}

// The same seed gives the same chain with 1 and 2 threads; SIGTERM saves the state and exits
// 143, and --resume finishes it identically.
TEST_F(FitCli, SameChainWithOneAndTwoThreadsAndAfterSigterm) {
  const std::string config = fit_config();
  ASSERT_EQ(run("fit --config " + config + small("one.h5") + " threads=1").exit_code, 0);
  ASSERT_EQ(run("fit --config " + config + small("two.h5") + " threads=2").exit_code, 0);
  expect_same_chain(swarmfit::read_run((dir_ / "one.h5").string()), swarmfit::read_run((dir_ / "two.h5").string()));

  std::vector<std::string> args = {"fit", "--config", config};
  std::istringstream words(small("term.h5", " generations=100000"));
  for (std::string w; words >> w;) args.push_back(w);
  const pid_t pid = fork();
  if (pid == 0) {
    std::freopen((dir_ / "term.log").c_str(), "w", stdout);
    std::vector<char*> argv = {const_cast<char*>(SWARMFIT_BINARY)};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(SWARMFIT_BINARY, argv.data());
    _exit(127);
  }
  usleep(1500000);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  const swarmfit::RunRecord saved = swarmfit::read_run((dir_ / "term.h5").string());
  EXPECT_GT(saved.state.generation, 0);
  EXPECT_EQ(saved.chain.num_draws(), saved.state.generation);
}

// One fit shared over 2 MPI ranks (each integrating a share of every batch) gives the chain of one
// process, bitwise; rank 0 alone writes.
// The same with the least-squares start and the surrogate force, whose residual calls (Levenberg-
// Marquardt's Jacobians, the surrogate's stencils) are shared over the ranks too.
TEST_F(FitCli, TwoMpiRanksGiveTheChainOfOne) {
  if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun (Open MPI)";
  const std::string config = fit_config();
  for (const std::string keys :
       {std::string(" threads=1"), std::string(" threads=1 least_squares=10 gradient=0.8 gradient_population=whole "
                                               "gradient_steps=3 gradient_force=surrogate burn_in=6")}) {
    SCOPED_TRACE(keys);
    ASSERT_EQ(run("fit --config " + config + small("one.h5", " overwrite=true") + keys).exit_code, 0);
    const std::string command =
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 " +
        std::string(SWARMFIT_BINARY) + " fit --config " + config + small("two.h5", " overwrite=true") + keys + " > " +
        (dir_ / "mpi.log").string() + " 2>&1";
    const int code = std::system(command.c_str());
    std::ifstream in(dir_ / "mpi.log");
    const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_EQ(code, 0) << log;
    EXPECT_EQ(log.find("swarmfit fit:"), log.rfind("swarmfit fit:")) << "one rank speaks: " << log;
    const swarmfit::RunRecord one = swarmfit::read_run((dir_ / "one.h5").string());
    expect_same_chain(one, swarmfit::read_run((dir_ / "two.h5").string()));
    if (keys.find("surrogate") != std::string::npos) EXPECT_FALSE(one.state.gradient_surrogate.at(0).empty());
  }
}

// SIGTERM during a stability pass far too long to wait for (1e7 orbits, run in calls of 1e3 that
// poll the signal) ends the command within the call: in the start phase with nothing written, in
// the sampling with the state of the last whole generation saved; so does SIGTERM during the start
// phase's optimiser, at its next progress report. Without the polling the command
// would run for hours; the test waits 60 s, then kills it and fails.
TEST_F(FitCli, SigtermDuringALongStabilityPassIsHonouredAtOnce) {
  const std::string config = fit_config();
  auto start = [&](const std::string& keys, const std::string& log) {
    std::vector<std::string> args = {"fit", "--config", config};
    std::istringstream words(keys);
    for (std::string w; words >> w;) args.push_back(w);
    return spawn(args, log);
  };
  auto terminate = [](pid_t pid) {  // the exit code, or -1 if it had to be killed
    usleep(1500000);
    kill(pid, SIGTERM);
    int status = 0;
    for (int waited = 0; waited < 60000; waited += 10) {
      if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
      usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
  };
  auto text = [](const fs::path& file) {
    std::ifstream in(file);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string long_pass = " stability=integrate stability_horizon=1e7";

  // In the start phase (its walkers are screened at the full horizon): nothing written.
  EXPECT_EQ(terminate(start(small("start.h5") + long_pass, (dir_ / "start.log").string())), 128 + SIGTERM);
  EXPECT_NE(text(dir_ / "start.log").find("in the start phase; nothing written"), std::string::npos)
      << text(dir_ / "start.log");
  EXPECT_FALSE(fs::exists(dir_ / "start.h5"));
  // In the start phase's optimiser (a billion generations: a slow target's hour, shortened).
  EXPECT_EQ(terminate(start(small("optimiser.h5", " optimize=1000000000"), (dir_ / "optimiser.log").string())),
            128 + SIGTERM);
  EXPECT_NE(text(dir_ / "optimiser.log").find("in the start phase; nothing written"), std::string::npos)
      << text(dir_ / "optimiser.log");
  EXPECT_FALSE(fs::exists(dir_ / "optimiser.h5"));

  // In the sampling: a short run at a 1-orbit horizon, resumed with the long one (the command
  // line's keys are not part of the configuration text --resume checks).
  const std::string path = (dir_ / "sampling.h5").string();
  ASSERT_EQ(run("fit --config " + config +
                small("sampling.h5", " generations=3 stability=integrate stability_horizon=1 checkpoint_every=1"))
                .exit_code,
            0);
  const pid_t pid = start("--resume" + small("sampling.h5", " generations=100000 checkpoint_every=1" + long_pass),
                          (dir_ / "sampling.log").string());
  EXPECT_EQ(terminate(pid), 128 + SIGTERM);
  EXPECT_NE(text(dir_ / "sampling.log").find("interrupted (signal 15) at generation 3; state saved"), std::string::npos)
      << text(dir_ / "sampling.log");
  const swarmfit::RunRecord saved = swarmfit::read_run(path);
  EXPECT_EQ(saved.state.generation, 3);
  EXPECT_EQ(saved.chain.num_draws(), 3);
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().string().find(".partial."), std::string::npos) << "left behind: " << entry.path();
}

// The run file as users read it: h5py and ArviZ (whose R-hat and ESS must equal swarmfit's).
TEST_F(FitCli, RunFileLoadsInH5pyAndArvizWithTheSameDiagnostics) {
  const std::string config = fit_config();
  const Result r = run("fit --config " + config + small("run.h5", " generations=120"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("period_b"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mass_jupiter_c"), std::string::npos) << r.out;
  const std::string command = "python3 " + std::string(SWARMFIT_SOURCE_DIR) + "/tests/python/check_run_file.py " +
                              (dir_ / "run.h5").string() + " " + (dir_ / "run_summary.csv").string() + " > " +
                              (dir_ / "python.log").string() + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(dir_ / "python.log");
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) GTEST_SKIP() << log;
  EXPECT_EQ(status, 0) << log;
  const Result plot = run("plot " + (dir_ / "run.h5").string() + " --output " + (dir_ / "plots").string());
  EXPECT_EQ(plot.exit_code, 0) << plot.err;
  for (const char* png : {"rv.png", "ttv_b.png", "ttv_c.png", "corner.png", "trace.png"})
    EXPECT_GT(fs::exists(dir_ / "plots" / png) ? fs::file_size(dir_ / "plots" / png) : 0, 10000u) << png;
  const Result summary = run("summary " + (dir_ / "run.h5").string());
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("acceptance after the burn-in"), std::string::npos) << summary.out;
}

}  // namespace

namespace {

// The bundled demo data are what `swarmfit simulate` makes from the documented truth with the
// documented command (examples/demo/truth.cfg), byte for byte.
// Kill-and-resume for `swarmfit stability` (issue 37): killed with SIGKILL at random moments
// and continued with --resume from its checkpoint each time, it ends with the table of an
// uninterrupted run, byte for byte, and nothing half-written is left.
TEST_F(FitCli, StabilityKilledAtRandomAndResumedGivesTheSameTable) {
  ASSERT_EQ(run("fit --config " + fit_config() + small("in_run.h5")).exit_code, 0);
  const std::string run_file = (dir_ / "in_run.h5").string();
  // A horizon whose 20 checkpoints come every ~0.2 s here, so that most kills (0.1-1 s) leave one
  // more behind (at 1e5 years, 0.7 s apart, a slower build made too little progress in 60 kills).
  const std::vector<std::string> common = {"stability", run_file, "--draws",   "16",
                                           "--horizon", "30000",  "--threads", "1"};
  std::vector<std::string> reference = common;
  for (const char* a : {"--output", "ref.csv"}) reference.push_back(a);
  reference.back() = (dir_ / "ref.csv").string();
  ASSERT_EQ(run_and_kill(reference, 600000, (dir_ / "ref.log").string()), 0);
  std::vector<std::string> killed = common;
  killed.push_back("--output");
  killed.push_back((dir_ / "killed.csv").string());
  killed.push_back("--resume");
  std::mt19937 random(7);
  int kills = 0, code = -1;
  for (int attempt = 0; attempt < 60 && code != 0; ++attempt) {
    code = run_and_kill(killed, 100 + static_cast<int>(random() % 900), (dir_ / "killed.log").string());
    kills += code == -1;
  }
  ASSERT_EQ(code, 0) << "never finished";
  EXPECT_GE(kills, 1);
  auto slurp = [](const fs::path& f) {
    std::ifstream in(f);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(slurp(dir_ / "killed.csv"), slurp(dir_ / "ref.csv"));
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().string().find(".partial."), std::string::npos) << "left behind: " << entry.path();
    EXPECT_EQ(entry.path().string().find("killed.csv.checkpoint"), std::string::npos) << "left: " << entry.path();
  }
}

// `swarmfit stability` on a fit's draws: one CSV row per draw, every survivor with status ok and
// the horizon reached, and bad requests refused before any work.
TEST_F(FitCli, StabilityOfPosteriorDrawsWritesOneRowPerDraw) {
  const Result fit = run("fit --config " + fit_config() + small("in_run.h5"));
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  const std::string run_file = (dir_ / "in_run.h5").string(), csv = (dir_ / "in_stability.csv").string();
  const std::string png = (dir_ / "in_stability.png").string();
  const Result r = run("stability " + run_file + " --horizon 200 --draws 24 --output " + csv + " --png " + png);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(fs::file_size(png), 1000u);
  EXPECT_NE(r.out.find("survived the horizon"), std::string::npos) << r.out;
  std::ifstream in(csv);
  std::string header, line;
  std::getline(in, header);
  EXPECT_NE(header.find("megno"), std::string::npos);
  int rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    if (line.find(",ok,1,") != std::string::npos) EXPECT_EQ(line.find("nan"), std::string::npos) << line;
  }
  EXPECT_EQ(rows, 24);
  // The same results as HDF5 next to the CSV: one dataset per column.
  const std::string h5 = (dir_ / "in_stability.h5").string();
  ASSERT_TRUE(fs::exists(h5));
  const swarmfit::h5::Handle file(H5Fopen(h5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), h5);
  std::vector<hsize_t> dims;
  EXPECT_EQ(swarmfit::h5::read_doubles(file, "megno", &dims).size(), 24u);
  EXPECT_EQ(swarmfit::h5::read_doubles(file, "max_e", &dims).size(), 48u);
  EXPECT_EQ(dims, (std::vector<hsize_t>{24, 2}));
  expect_refused(run("stability " + run_file + " --horizon 200 --output " + csv), "exists");
  expect_refused(run("stability " + run_file + " --horizon -1 --output " + csv + "2"), "--horizon must be > 0");
  expect_refused(run("stability " + run_file + " --draws -3 --output " + csv + "2"), "--draws must be >= 0");
  expect_refused(run("stability " + run_file + " --megno-limit 1 --output " + csv + "2"), "--megno-limit must be > 2");
  expect_refused(run("stability " + run_file + " --integrator rkck_adaptive --output " + csv + "2"), "adapts its step");
  expect_refused(run("stability " + (dir_ / "missing.h5").string() + " --output " + csv + "2"), "missing.h5");
  EXPECT_FALSE(fs::exists(csv + "2"));
  EXPECT_FALSE(fs::exists(csv + ".checkpoint.h5"));  // removed when the run completed
  write("in_stopped.csv.checkpoint.h5", "x");
  expect_refused(run("stability " + run_file + " --output " + (dir_ / "in_stopped.csv").string()), "--resume");
}

// `swarmfit map`: one CSV row per cell, x fastest; the demo's own values (the middle cell) survive
// with MEGNO near 2; bad axes are refused in one line.
TEST_F(FitCli, MapWritesOneRowPerCell) {
  const std::string csv = (dir_ / "in_map.csv").string(), png = (dir_ / "in_map.png").string();
  const Result r = run("map --config " + fit_config() + " --x period_c:19.5:20.3:3 --y e_c:0.01:0.5:3 --horizon 100 " +
                       "--output " + csv + " --png " + png);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(fs::file_size(png), 1000u);
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("period_c,e_c,status,survived,orbits,megno", 0), 0u) << line;
  std::vector<std::string> rows;
  while (std::getline(in, line)) rows.push_back(line);
  ASSERT_EQ(rows.size(), 9u);
  EXPECT_EQ(rows[0].rfind("19.5,0.01,", 0), 0u) << rows[0];
  EXPECT_EQ(rows[1].rfind("19.9,0.01,", 0), 0u) << rows[1];
  EXPECT_NE(rows[1].find(",ok,1,"), std::string::npos) << rows[1];
  expect_refused(run("map --config " + fit_config() + " --x e_z:0:1:3 --y e_c:0:0.5:3 --output " + csv + "2"),
                 "neither a parameter of the model nor e_<planet>");
  expect_refused(run("map --config " + fit_config() + " --x period_c:1:2 --y e_c:0:0.5:3 --output " + csv + "2"),
                 "--x expects NAME:LO:HI:N");
  expect_refused(run("map --config " + fit_config() + " --x period_c:19:20:3 --y e_c:0:0.5:3 --output " + csv),
                 "exists");
}

TEST_F(FitCli, SimulateRemakesTheBundledDemoDataFromItsTruth) {
  const std::string demo = std::string(SWARMFIT_SOURCE_DIR) + "/examples/demo";
  const Result r = run("simulate --config " + demo + "/truth.cfg --output " + (dir_ / "data").string() +
                       " --span 900 --rv-count 50 --rv-error 2.5 --rv-jitter 1.5 --rv-offset -12.3 --instrument SIM"
                       " --transit-error 1.5 --seed 2026");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  for (const char* name : {"rv.txt", "transits_b.txt", "transits_c.txt", "truth.csv"})
    EXPECT_EQ(slurp(dir_ / "data" / name), slurp(fs::path(demo) / "data" / name)) << name;
  fs::remove_all(dir_ / "data");
  expect_refused(run("simulate --config " + demo + "/fit.cfg --output " + (dir_ / "x").string() + " --span 100"),
                 "this command takes no data sections");
}

}  // namespace

namespace {

// `swarmfit catalog` on a small Systemic-format catalog made here: Alpha (one planet, P = 5 d,
// K = 50 m/s, in three files: m/s, km/s with an absolute level, and a file repeating some of the
// first file's spectra, with the kinds of damage the archive's files have), Beta (its only file
// missing) and Gamma (its planet's period longer than its data span).
class CatalogCli : public FitCli {
 protected:
  std::string make_catalog() {
    const fs::path folder = dir_ / "in_catalog";
    fs::create_directories(folder);
    auto put = [&](const std::string& name, const std::string& text) { std::ofstream(folder / name) << text; };
    std::uint64_t state = 12345;
    auto normal = [&] {  // Box-Muller on a 64-bit LCG: the same data everywhere
      auto uniform = [&] {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return ((state >> 11) + 0.5) / 9007199254740992.0;
      };
      const double u = uniform(), v = uniform();
      return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
    };
    auto signal = [](double t) { return 50.0 * std::sin(2 * M_PI * (t - 2455001.3) / 5.0); };
    std::ostringstream keck, harps, again, shifted, reduced;
    keck << "# instrument = HIRES\n# value_units = M/S\n";
    harps << "# instrument = HARPS\n# value_units = KM/S\n";
    again << "# instrument = HIRES\n# value_units = M/S\n";
    char row[160];
    for (int k = 0; k < 40; ++k) {
      const double t = 2455000.0 + 3.7 * k + 0.1 * (k % 3);
      const double v = signal(t) + 3 * normal();
      std::snprintf(row, sizeof row, "%.5f %.3f 3.0\n", t, v);
      keck << row;
      if (k >= 20 && k < 24) {  // spectra 20-23 reduced again: times 40 s later, other RVs
        std::snprintf(row, sizeof row, "%.5f %.3f 3.2\n", t + 0.0005, v - 2.0);
        reduced << row;
      }
      if (k < 8) {  // an older reduction of the first 8 spectra, time-stamped 1000 d early
        std::snprintf(row, sizeof row, "%.4f %.3f 3.5\n", t - 1000.0, v + 1.5);
        shifted << row;
      }
      if (k < 5) {  // the same spectra published twice, in km/s labelled M/S
        std::snprintf(row, sizeof row, "%.5f %.6f 0.003\n", t, v / 1000);
        again << row;
      }
    }
    for (int k = 0; k < 40; ++k) {
      const double t = 2455002.1 + 4.3 * k;
      std::snprintf(row, sizeof row, "%.5f %.6f 0.003\n", t, -12.345 + (signal(t) + 3 * normal()) / 1000);
      harps << row;
      if (k == 7) harps << row;                                                             // a repeated row
      if (k == 9) harps << "2455100.5 -12.345 0.0\n";                                       // a zero error
      if (k == 11) harps << "2455101.5 -12.345 0.003 extra\n";                              // an extra column
      if (k == 13) harps << std::fixed << std::setprecision(5) << t << " -12.300 0.003\n";  // the same time
    }
    for (int k = 0; k < 5; ++k) {
      const double t = 2455300.0 + 2.9 * k;
      std::snprintf(row, sizeof row, "%.5f %.6f 0.003\n", t, (signal(t) + 3 * normal()) / 1000);
      again << row;
    }
    std::ostringstream mixed;  // two stars' RVs in one file
    mixed << "# value_units = M/S\n" << std::fixed << std::setprecision(3);
    for (int k = 0; k < 12; ++k) mixed << 2455010.0 + k << " " << (k % 2 ? 5000.0 : 0.0) + k << " 3.0\n";
    put("Alpha_4_LICK.vels", mixed.str());
    put("Alpha_1_KECK.vels", keck.str());
    put("Alpha_2_3.6M.vels", harps.str());
    put("Alpha_3_KECK.vels", again.str());
    put("Alpha_5_KECK.vels", "# instrument = HIRES\n# value_units = M/S\n" + shifted.str());
    for (int k = 0; k < 2; ++k) reduced << std::fixed << std::setprecision(5) << 2455400.0 + 3.1 * k << " 10.0 3.2\n";
    put("Alpha_6_KECK.vels", "# instrument = HIRES\n# value_units = M/S\n" + reduced.str());
    put("Alpha.sys",
        "# Data from http://exoplanetarchive.ipac.caltech.edu/\n\nName\tAlpha\nMass\t1.00\nTeff\t5700\nRV[]\t"
        "Alpha_1_KECK.vels\nRV[]\tAlpha_2_3.6M.vels\nRV[]\tAlpha_3_KECK.vels\nRV[]\tAlpha_4_LICK.vels\nRV[]\t"
        "Alpha_5_KECK.vels\nRV[]\tAlpha_6_KECK.vels\n");
    put("Beta.sys",
        "# Data from http://exoplanetarchive.ipac.caltech.edu/\n\nName\tBeta\nMass\t0.9\nRV[]\tBeta_1_X.vels\n");
    // Another star's copy of a file: its times moved by dt (the catalog takes files shared between
    // stars for tables of several stars).
    auto moved = [](const std::string& text, double dt) {
      std::istringstream in(text);
      std::string out;
      for (std::string line; std::getline(in, line);) {
        double t = 0;
        char rest[200] = "";
        if (line[0] != '#' && std::sscanf(line.c_str(), "%lf %199[^\n]", &t, rest) == 2) {
          char buffer[260];
          std::snprintf(buffer, sizeof buffer, "%.5f %s", t + dt, rest);
          line = buffer;
        }
        out += line + "\n";
      }
      return out;
    };
    put("Gamma_1_LICK.vels", moved(keck.str(), 0.0007));
    put("Gamma_2_LICK.vels",
        "# value_units = M/S\n2455000.5 1.0 3.0\n2455001.5 2.0 3.0\n2455002.5 3.0 3.0\n"
        "2475000.5 4.0 3.0\n");
    put("Gamma.sys",
        "# Data from http://exoplanetarchive.ipac.caltech.edu/\n\nName\tGamma\nMass\t1.1\nRV[]\t"
        "Gamma_1_LICK.vels\nRV[]\tGamma_2_LICK.vels\n");
    // Delta and Epsilon: Alpha's files again under other names, for more targets to share out.
    for (const char* star : {"Delta", "Epsilon"}) {
      const std::string name = star;
      const double dt = name == "Delta" ? 0.0003 : 0.0005;
      put(name + "_1_KECK.vels", moved(keck.str(), dt));
      put(name + "_2_3.6M.vels", moved(harps.str(), dt));
      put(name + ".sys", "# Data from http://exoplanetarchive.ipac.caltech.edu/\nName\t" + name +
                             "\nMass\t1.0\nRV[]\t" + name + "_1_KECK.vels\nRV[]\t" + name + "_2_3.6M.vels\n");
    }
    put("planets.csv",
        "system,planet,period_days,period_err,K_ms,e,omega_deg,tperi_or_tc,time_kind,status,flags,mstar_K_msun\n"
        "Alpha,b,5.0,0.001,50,0.0,,2455001.3,tc,Confirmed planets,,1.0\n"
        "Delta,b,5.0,0.001,50,0.0,,2455001.3,tc,Confirmed planets,,1.0\n"
        "Epsilon,b,5.0,0.001,50,0.0,,2455001.3,tc,Confirmed planets,,1.0\n"
        "Beta,b,10.0,,20,,,,,Confirmed planets,,\n"
        "Gamma,b,900.0,,30,0.1,45,2455100,tperi,Confirmed planets,,\n");
    return write("catalog.cfg", "folder = in_catalog\nplanets = planets.csv\n");
  }
  std::string slurp(const fs::path& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  // summary.csv without its seconds column (the one thing a resumed run changes).
  std::string summary_without_time(const fs::path& output) {
    std::istringstream in(slurp(output / "summary.csv"));
    std::string out;
    for (std::string line; std::getline(in, line);) {
      std::vector<std::string> fields;
      std::stringstream s(line);
      for (std::string f; std::getline(s, f, ',');) fields.push_back(f);
      for (std::size_t k = 0; k < fields.size(); ++k)
        if (k != 5) out += fields[k] + ",";
      out += "\n";
    }
    return out;
  }
  static constexpr const char* kShort = " generations=300 optimize=30 walkers=24 ess_target=0 threads=1";
};

// The checks report what they found per file and repair only by their rules; the planet's period
// and amplitude come back from the m/s and the km/s files together; skipped targets say why; a
// second run redoes nothing and writes the same summary.
TEST_F(CatalogCli, ChecksEveryFileFitsTheTargetsAndResumesWithoutRedoing) {
  const std::string catalog = make_catalog();
  const fs::path out = dir_ / "out";
  const Result check = run("catalog --config " + catalog + " --output " + out.string() + " --check");
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_NE(check.out.find("5 targets, 2 skipped"), std::string::npos) << check.out;
  const std::string report = slurp(out / "report.txt");
  for (const char* line :
       {"KM/S: RVs and errors converted to m/s", "1 rows repeat an earlier row exactly", "1 rows with an error <= 0",
        "1 rows are not three finite numbers", "labelled M/S, but the RVs (scatter 0.0",
        "largest known K 50 m/s) are in km/s and the errors (median 0.003) in km/s: converted",
        "1 rows with a time in the future (line 5): the file's times are shifted, not used",
        "1 rows at the time (to 1e-5 d) of an earlier row with other values",
        "RVs in two levels 4991 m/s apart (more than one star",
        "5 rows (lines 3, 4, 5, 6, 7) hold a time and RV an earlier file of this star holds",
        "8 of its 8 times are those of Alpha_1_KECK.vels less 1000.000 d (the same spectra with shifted time stamps): "
        "not used",
        "4 rows (lines 3, 4, 5, 6) at the times (within 2e-3 d) of rows of Alpha_1_KECK.vels, the same instrument: the "
        "same spectra reduced twice, dropped",
        "2 rows left: not used", "Beta (Beta, 0.9 Msun from .sys, 0 RVs): skipped: no usable RV file",
        "Gamma (Gamma, 1.1 Msun from .sys, 40 RVs): skipped: no known planet the data can constrain",
        "cannot be read (missing): not used", "planet b not fitted: P = 900 d > 1.5 x"})
    EXPECT_NE(report.find(line), std::string::npos) << line << "\n" << report;
  EXPECT_TRUE(fs::exists(out / "targets" / "Alpha" / "fit.cfg"));
  EXPECT_FALSE(fs::exists(out / "summary.csv"));

  const Result fit = run("catalog --config " + catalog + " --output " + out.string() + kShort);
  ASSERT_EQ(fit.exit_code, 0) << fit.err << fit.out;
  EXPECT_NE(fit.out.find("3 fitted now, 0 kept from before, 0 failed"), std::string::npos) << fit.out;
  EXPECT_NE(fit.out.find("5 targets, 2 skipped"), std::string::npos) << fit.out;
  EXPECT_NE(fit.out.find("planets: 3 not converged, 2 skipped,"), std::string::npos) << fit.out;
  const std::string summary = slurp(out / "summary.csv");
  std::istringstream lines(summary);
  std::string line;
  std::getline(lines, line);
  int rows = 0;
  while (std::getline(lines, line)) {
    ++rows;
    std::vector<std::string> f;
    std::stringstream s(line);
    for (std::string x; std::getline(s, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 17u) << line;
    if (f[0] == "Alpha") {
      EXPECT_EQ(f[3], "85");                             // 40, 40 (3 damaged rows dropped), 5 new of the third file
      EXPECT_NEAR(std::stod(f[11]), 5.0, 2e-3) << line;  // period median
      EXPECT_NEAR(std::stod(f[14]), 50.0, 2.0) << line;  // K median (sd ~0.5 m/s)
    } else if (f[0] == "Beta" || f[0] == "Gamma") {
      EXPECT_EQ(f[2].rfind(f[0] == "Beta" ? "skipped: no usable RV file" : "skipped: no known planet", 0), 0u) << line;
    }
    if (f[0] != "Beta" && f[0] != "Gamma") EXPECT_EQ(f[2], "not converged") << line;  // (ess_target = 0)
  }
  EXPECT_EQ(rows, 5);
  // The browser report: every target's row, and an RV plot per fitted target that loads, as a
  // headless Chromium (Debian's package, installed by setup.sh) sees the page.
  ASSERT_NE(fit.out.find("report: "), std::string::npos) << fit.out << slurp(out / "report.log");
  if (std::system("command -v chromium > /dev/null 2>&1") == 0) {
    const std::string dom = (dir_ / "dom.html").string();
    const std::string browse =
        "chromium --headless --no-sandbox --disable-gpu --allow-file-access-from-files "
        "--dump-dom file://" +
        (out / "report" / "index.html").string() + " > " + dom + " 2>/dev/null";
    ASSERT_EQ(std::system(browse.c_str()), 0);
    const std::string page = slurp(dom);
    for (const char* target : {"Alpha", "Beta", "Gamma", "Delta", "Epsilon"})
      EXPECT_NE(page.find("<tr data-target=\"" + std::string(target) + "\""), std::string::npos) << target;
    EXPECT_NE(page.find("data-images-loaded=\"3\" data-images-broken=\"0\""), std::string::npos) << page.substr(0, 600);
  } else {
    std::cout << "no chromium: the report's page is not loaded in a browser here\n";
  }
  // The second file's level, -12.345 km/s, as its offset in m/s.
  const std::string alpha = slurp(out / "targets" / "Alpha" / "run_summary.csv");
  const auto at = alpha.find("offset_3-6M_2,");
  ASSERT_NE(at, std::string::npos) << alpha;
  std::stringstream offset(alpha.substr(at));
  std::string name, unit, value;
  std::getline(offset, name, ',');
  std::getline(offset, unit, ',');
  std::getline(offset, value, ',');
  EXPECT_NEAR(std::stod(value), -12345.0, 3.0) << alpha.substr(at, 200);

  const std::string before = summary_without_time(out);
  const Result again = run("catalog --config " + catalog + " --output " + out.string() + kShort);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("0 fitted now, 3 kept from before"), std::string::npos) << again.out;
  EXPECT_EQ(summary_without_time(out), before);
}

// The help lists the keys as they are given (key=value), not as --options the command refuses.
TEST_F(FitCli, HelpListsKeysAsTheyAreGiven) {
  for (const char* command : {"fit --help", "predict --help"}) {
    const Result r = run(command);
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_NE(r.out.find("  integrator=VALUE (=mvs)"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("--integrator"), std::string::npos) << r.out;
  }
  const Result fit = run("fit --help");
  EXPECT_NE(fit.out.find("  walkers=VALUE (=0)"), std::string::npos) << fit.out;
  EXPECT_EQ(fit.out.find("--walkers"), std::string::npos) << fit.out;
}

// Ranges no run can honour: one line, exit 2, nothing written (issue 37:
// threads=100000 crashed in OpenMP and left a .partial file; the others ran, or ran 0 draws).
TEST_F(FitCli, OutOfRangeKeysAreRefusedBeforeAnyWork) {
  const std::string source = SWARMFIT_SOURCE_DIR;
  const std::string fit =
      "fit --config " + source + "/examples/demo/fit.cfg generations=2 output=" + (dir_ / "f.h5").string();
  expect_refused(run(fit + " threads=100000"), "key 'threads' must be 0 (all cores) to 1024");
  expect_refused(run(fit + " close_approach=-1"), "key 'close_approach' must be >= 0");
  expect_refused(run(fit + " thin=5"), "key 'thin' must be at most generations (2): no draw would be kept");
  expect_refused(run(fit + " burn_in=-5"), "key 'burn_in' must be -1 (automatic: the first half) or >= 0");
  expect_refused(run(fit + " cuda_layout=warp"), "key 'cuda_layout'");
  // A thread per body has its observers for mvs in Jacobi coordinates only.
  expect_refused(run(fit + " cuda_layout=body integrator=hermite"),
                 "key 'cuda_layout': body needs integrator = mvs with mvs_coordinates = jacobi");
  expect_refused(run(fit + " cuda_layout=body mvs_coordinates=democratic_heliocentric"),
                 "key 'cuda_layout': body needs integrator = mvs with mvs_coordinates = jacobi");
  const std::string bad_inc = fit_config([](std::string t) { return replace(t, "inc = 89.5", "inc = 200"); });
  expect_refused(run("fit --config " + bad_inc + " generations=2 output=" + (dir_ / "f.h5").string()),
                 "key 'inc' must be 0 to 180 degrees");
  expect_refused(
      run("integrate --config " + source + "/examples/demo.cfg threads=100000 output=" + (dir_ / "x.h5").string()),
      "key 'threads': must be 0 (all cores) to 1024");
}

// de_gamma sets the DE move's gamma (gamma_scale / sqrt(2 d)): it reaches the sampler (another
// chain than the default's), is kept in the run file, and a resume with another value is refused.
TEST_F(FitCli, DeGammaReachesTheSamplerAndTheRunFile) {
  const std::string source = SWARMFIT_SOURCE_DIR;
  const std::string fit = "fit --config " + source + "/examples/demo/fit.cfg generations=20 walkers=32 optimize=0";
  ASSERT_EQ(run(fit + " output=" + (dir_ / "in_default.h5").string()).exit_code, 0);
  const Result r = run(fit + " de_gamma=1.2 output=" + (dir_ / "in_g.h5").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // (in_*: files the refusals below may leave in the folder)
  const swarmfit::RunRecord a = swarmfit::read_run((dir_ / "in_default.h5").string()),
                            b = swarmfit::read_run((dir_ / "in_g.h5").string());
  EXPECT_EQ(a.settings.differential_evolution.gamma_scale, 2.38);
  EXPECT_EQ(b.settings.differential_evolution.gamma_scale, 1.2);
  EXPECT_NE(a.chain.log_likelihood, b.chain.log_likelihood);
  expect_refused(
      run("fit --config " + source + "/examples/demo/fit.cfg generations=30 walkers=32 optimize=0 --resume " +
          "output=" + (dir_ / "in_g.h5").string()),
      "another de_gamma");
  expect_refused(run(fit + " de_gamma=0 output=" + (dir_ / "z.h5").string()), "key 'de_gamma' must be > 0 and <= 10");
}

// gradient_population = whole: a run stopped after its burn-in and resumed gives the chain of an
// uninterrupted one, bitwise (the run file keeps the metric averaged over the burn-in, frozen
// after it, the adapted step and, with gradient_steps = 0, the adapted trajectory length; a stop
// inside the burn-in: Demcmc.GradientMovesRestoreContinuesExactly), and a resume with halves is
// refused, as are run files whose metric has a level too many or whose gradient_whole is not 0 or 1
// (or not an integer).
TEST_F(FitCli, WholePopulationGradientRunsResumeBitwise) {
  const std::string source = SWARMFIT_SOURCE_DIR;
  for (const std::string steps : {"2", "0"}) {
    SCOPED_TRACE(steps);
    const std::string fit =
        "fit --config " + source +
        "/examples/demo/fit.cfg walkers=32 optimize=0 gradient=0.8 burn_in=10 gradient_steps=" + steps +
        " gradient_population=whole";
    const std::string whole = (dir_ / ("in_whole" + steps + ".h5")).string(),
                      part = (dir_ / ("in_part" + steps + ".h5")).string();
    ASSERT_EQ(run(fit + " generations=24 output=" + whole).exit_code, 0);
    ASSERT_EQ(run(fit + " generations=13 output=" + part).exit_code, 0);
    const std::string copy = (dir_ / ("in_copy" + steps + ".h5")).string();
    fs::copy_file(part, copy);
    const Result r = run(fit + " generations=24 --resume output=" + part);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const swarmfit::RunRecord a = swarmfit::read_run(whole), b = swarmfit::read_run(part);
    expect_same_chain(a, b);
    EXPECT_TRUE(a.settings.gradient.whole);
    ASSERT_EQ(a.state.gradient_metric.size(), 1u);
    EXPECT_EQ(a.state.gradient_metric[0].rows(), a.state.walkers.rows());
    EXPECT_TRUE(a.state.gradient_metric[0] == b.state.gradient_metric[0]);
    EXPECT_EQ(a.state.gradient_scale, b.state.gradient_scale);
    EXPECT_EQ(a.state.gradient_length, b.state.gradient_length);
    if (steps == "0") EXPECT_NE(a.state.gradient_length, 1.0);  // adapted (from 1) and kept
    expect_refused(run("fit --config " + source + "/examples/demo/fit.cfg walkers=32 optimize=0 gradient=0.8 " +
                       "burn_in=10 gradient_steps=" + steps + " generations=30 --resume output=" + part),
                   "gradient move settings");
    if (steps != "0") continue;
    auto edit = [&](const std::string& name, const std::string& python) { return edited_copy(copy, name, python); };
    const std::string levels = edit("in_levels.h5",
                                    "m = f['state/gradient_metric'][()]\ndel f['state/gradient_metric']\n"
                                    "f['state/gradient_metric'] = np.concatenate([m, m])");
    const std::string flag = edit("in_flag.h5", "f.attrs['gradient_whole'] = np.int64(2)");
    const std::string fraction = edit("in_fraction.h5", "f.attrs['gradient_whole'] = 1.5");  // (not read as 1)
    const std::string negative = edit("in_negative.h5", "f['state/gradient_metric'][0, 0, 0] = -1.0");
    // A 2 GB dataset declared in a few kB (chunked, unwritten): refused from its shape, never read.
    const std::string huge = edit("in_huge.h5",
                                  "del f['state/gradient_metric']\n"
                                  "f.create_dataset('state/gradient_metric', shape=(1, 16384, 16384), dtype='f8', "
                                  "chunks=(1, 64, 64))");
    expect_refused(run(fit + " generations=24 --resume output=" + huge), "is not [level][d][d]");
    expect_refused(run(fit + " generations=24 --resume output=" + negative), "not a symmetric positive-definite");
    const std::string asymmetric = edit("in_asymmetric.h5", "f['state/gradient_metric'][0, 0, 1] *= 1.001");
    expect_refused(run(fit + " generations=24 --resume output=" + asymmetric), "not a symmetric positive-definite");
    expect_refused(run(fit + " generations=24 --resume output=" + levels), "has 2 levels for 1 temperature(s)");
    expect_refused(run(fit + " generations=24 --resume output=" + flag), "gradient_whole is not 0 or 1");
    expect_refused(run(fit + " generations=24 --resume output=" + fraction), "'gradient_whole' is not one integer");
  }
}

// gradient_force = surrogate (moves/surrogate.hpp): the quadratic surrogate built in the burn-in is
// kept in the run file, so a run stopped after its burn-in and resumed gives the uninterrupted chain
// bitwise; a damaged or mismatched surrogate, or a resume with the other force, is refused before
// any work.
TEST_F(FitCli, SurrogateForceRunsResumeBitwise) {
  const std::string source = SWARMFIT_SOURCE_DIR;
  const std::string fit = "fit --config " + source +
                          "/examples/demo/fit.cfg walkers=32 optimize=0 gradient=0.8 burn_in=6 gradient_steps=4 "
                          "gradient_population=whole gradient_force=surrogate";
  const std::string whole = (dir_ / "in_surrogate_whole.h5").string(), part = (dir_ / "in_surrogate_part.h5").string();
  const Result w = run(fit + " generations=16 output=" + whole);
  ASSERT_EQ(w.exit_code, 0) << w.err;
  ASSERT_EQ(run(fit + " generations=9 output=" + part).exit_code, 0);
  const std::string copy = (dir_ / "in_surrogate_copy.h5").string();
  fs::copy_file(part, copy);
  const Result r = run(fit + " generations=16 --resume output=" + part);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const swarmfit::RunRecord a = swarmfit::read_run(whole), b = swarmfit::read_run(part);
  expect_same_chain(a, b);
  EXPECT_TRUE(a.settings.gradient.surrogate);
  ASSERT_EQ(a.state.gradient_surrogate.size(), 1u);
  ASSERT_FALSE(a.state.gradient_surrogate[0].empty());
  EXPECT_TRUE(a.state.gradient_surrogate[0].hessian == b.state.gradient_surrogate[0].hessian);
  EXPECT_TRUE(a.state.gradient_surrogate[0].slope == b.state.gradient_surrogate[0].slope);
  const std::string differences = "fit --config " + source +
                                  "/examples/demo/fit.cfg walkers=32 optimize=0 gradient=0.8 burn_in=6 "
                                  "gradient_steps=4 gradient_population=whole generations=20 --resume output=" +
                                  part;
  expect_refused(run(differences), "gradient move settings");
  auto edit = [&](const std::string& name, const std::string& python) { return edited_copy(copy, name, python); };
  const std::string nan = edit("in_surrogate_nan.h5", "f['state/gradient_surrogate/hessian'][0, 0, 0] = np.nan");
  expect_refused(run(fit + " generations=16 --resume output=" + nan), "is not finite");
  const std::string upper = edit("in_surrogate_upper.h5", "f['state/gradient_surrogate/factor'][0, 1, 0] = 0.5");
  expect_refused(run(fit + " generations=16 --resume output=" + upper), "lower triangular");
  const std::string shape = edit("in_surrogate_shape.h5",
                                 "j = f['state/gradient_surrogate/jacobian'][()]\n"
                                 "del f['state/gradient_surrogate/jacobian']\n"
                                 "f['state/gradient_surrogate/jacobian'] = j[:, :, 1:]");
  expect_refused(run(fit + " generations=16 --resume output=" + shape), "does not match");
  // As many rows in every array, but not the model's: refused by the sampler before any work.
  const std::string rows = edit("in_surrogate_rows.h5",
                                "g = f['state/gradient_surrogate']\n"
                                "for k, extra in (('residuals', 1), ('jacobian', 1), ('hessian', 0)):\n"
                                "    v = g[k][()]\n"
                                "    del g[k]\n"
                                "    if k == 'hessian':\n"
                                "        d = v.shape[1]\n"
                                "        g[k] = np.zeros((v.shape[0], d, v.shape[2] + d))\n"
                                "    else:\n"
                                "        g[k] = np.concatenate([v, v[..., :1]], axis=-1)");
  expect_refused(run(fit + " generations=16 --resume output=" + rows), "residual rows, the model");
  const std::string flag = edit("in_surrogate_flag.h5", "f.attrs['gradient_surrogate'] = np.int64(2)");
  expect_refused(run(fit + " generations=16 --resume output=" + flag), "gradient_surrogate is not 0 or 1");
  const std::string huge = edit("in_surrogate_huge.h5",
                                "del f['state/gradient_surrogate/residuals']\n"
                                "f.create_dataset('state/gradient_surrogate/residuals', shape=(1, 1 << 30), "
                                "dtype='f8', chunks=(1, 4096))");
  expect_refused(run(fit + " generations=16 --resume output=" + huge), "is not [level][rows]");
}

// ephemeris = mean (ephemeris.hpp): the map anchored at the least-squares optimum is kept in the
// run file, so a run stopped and resumed gives the uninterrupted chain bitwise; a resume with
// the other coordinates, or with a damaged map, is refused before any work, and so is `swarmfit
// stability` on its draws (not yet supported).
TEST_F(FitCli, MeanEphemerisRunsResumeBitwise) {
  const std::string source = SWARMFIT_SOURCE_DIR;
  const std::string fit = "fit --config " + source +
                          "/examples/demo/fit.cfg walkers=32 optimize=0 least_squares=30 ephemeris=mean "
                          "gradient=0.5 gradient_steps=2 burn_in=4";
  const std::string whole = (dir_ / "in_mean_whole.h5").string(), part = (dir_ / "in_mean_part.h5").string();
  const Result w = run(fit + " generations=12 output=" + whole);
  ASSERT_EQ(w.exit_code, 0) << w.err;
  ASSERT_EQ(run(fit + " generations=7 output=" + part).exit_code, 0);
  const std::string copy = (dir_ / "in_mean_copy.h5").string();
  fs::copy_file(part, copy);
  const Result r = run(fit + " generations=12 --resume output=" + part);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const swarmfit::RunRecord a = swarmfit::read_run(whole), b = swarmfit::read_run(part);
  expect_same_chain(a, b);
  EXPECT_EQ(a.attributes.at("ephemeris"), "mean");
  const std::string plain = "fit --config " + source +
                            "/examples/demo/fit.cfg walkers=32 optimize=0 least_squares=30 " +
                            "gradient=0.5 gradient_steps=2 burn_in=4 generations=12 --resume output=" + part;
  expect_refused(run(plain), "another ephemeris");
  const std::string gain = edited_copy(copy, "in_mean_gain.h5", "f['ephemeris/gain'][0, 0] = np.nan");
  expect_refused(run(fit + " generations=12 --resume output=" + gain), "gain is not finite");
  const std::string gone = edited_copy(copy, "in_mean_gone.h5", "del f['ephemeris']");
  expect_refused(run(fit + " generations=12 --resume output=" + gone), "no /ephemeris group");
  const std::string planet = edited_copy(copy, "in_mean_planet.h5", "f['ephemeris/planets'][0] = 7");
  expect_refused(run(fit + " generations=12 --resume output=" + planet), "do not match the model");
  const std::string epoch = edited_copy(copy, "in_mean_epoch.h5", "f['ephemeris/reference_epoch_number'][0] = 10**15");
  expect_refused(run(fit + " generations=12 --resume output=" + epoch), "reference_epoch_number out of range");
  expect_refused(run("stability " + whole), "mean ephemerides");
}

// TOI-216 (issue 36's smallest hard fit): the 19 transit times of Dawson et al. 2019, whose short
// baseline leaves masses and eccentricities degenerate, converge with examples/toi216.cfg's
// tempering (R-hat < 1.01, ESS >= 1000: about 5,500 generations), and the posterior medians fall
// inside Kipping et al. 2019's 68% intervals from the first four TESS sectors (MNRAS 486, 4980:
// 30 +20/-14 and 200 +170/-100 Earth masses; e_b 0.132 +0.059/-0.023).
TEST_F(FitCli, Toi216ConvergesWithTemperingAndAgreesWithKipping2019) {
  const std::string source = SWARMFIT_SOURCE_DIR;
  if (!fs::exists(source + "/../shared/data/TOI-216/toi_216.dat")) GTEST_SKIP() << "../shared/data is absent";
  const std::string out = (dir_ / "toi216.h5").string();
  const Result r =
      run("fit --config " + source + "/examples/toi216.cfg generations=20000 threads=2 progress=off output=" + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("stopping rule met"), std::string::npos) << r.out;
  std::map<std::string, double> median;
  std::ifstream summary(dir_ / "toi216_summary.csv");
  std::stringstream lines;
  lines << summary.rdbuf();
  std::string line;
  while (std::getline(lines, line)) {
    std::stringstream fields(line);
    std::string name, unit, value;
    std::getline(fields, name, ',');
    std::getline(fields, unit, ',');
    std::getline(fields, value, ',');
    if (name == "mass_b" || name == "mass_c" || name == "e_b") median[name] = std::stod(value);
  }
  ASSERT_EQ(median.size(), 3u) << "summary rows";
  EXPECT_GT(median["mass_b"], 16.0);
  EXPECT_LT(median["mass_b"], 50.0);
  EXPECT_GT(median["mass_c"], 100.0);
  EXPECT_LT(median["mass_c"], 370.0);
  EXPECT_GT(median["e_b"], 0.109);
  EXPECT_LT(median["e_b"], 0.191);
}

// Silently wrong science (issue 37): at the old default step (the shortest period / 20, which
// suits the Kepler-splitting schemes only) hermite, rkck and leapfrog put the demo's transits
// hundreds to tens of thousands of minutes off with status ok. Each scheme's default step is now
// its own, refined until the model moves by < 0.1 data errors at half the step: every scheme
// predicts the transit times mvs predicts, to a small fraction of their errors.
TEST_F(FitCli, EverySchemesDefaultStepPredictsTheSameTransitTimes) {
  const std::string source = SWARMFIT_SOURCE_DIR;
  const std::string base = "predict --config " + source + "/examples/demo/fit.cfg --params " + source +
                           "/examples/demo/data/truth.csv --output ";
  auto model_times = [&](const std::string& integrator) {
    const Result r = run(base + (dir_ / integrator).string() + " integrator=" + integrator);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("(ok: tolerance 0.1 sigma)"), std::string::npos) << integrator << "\n" << r.out;
    return csv_column_pairs(dir_ / integrator / "transits.csv", 5, 4);  // model time, error
  };
  const auto mvs = model_times("mvs");
  ASSERT_EQ(mvs.size(), 137u);
  for (const char* integrator : {"hermite", "rkck", "leapfrog", "whfast", "saba4", "rkck_adaptive"}) {
    const auto other = model_times(integrator);
    ASSERT_EQ(other.size(), mvs.size()) << integrator;
    double worst = 0;
    for (std::size_t k = 0; k < mvs.size(); ++k)
      worst = std::max(worst, std::abs(other[k].first - mvs[k].first) / mvs[k].second);
    EXPECT_LT(worst, 0.2) << integrator << ": transit times differ from mvs's by " << worst << " errors";
  }
  // A step the user gives is kept, and a check that fails says so (stderr) without refusing.
  const Result coarse = run(base + (dir_ / "coarse").string() + " integrator=hermite time_step=0.5");
  EXPECT_EQ(coarse.exit_code, 0) << coarse.err;
  EXPECT_NE(coarse.out.find("STEP TOO LARGE"), std::string::npos) << coarse.out;
  EXPECT_NE(coarse.err.find("swarmfit: warning: the step is too large for these data"), std::string::npos)
      << coarse.err;
}

// step_choice = largest widens a default step while the check at the wider step passes: the
// demo's RVs alone take 4x the step (P_b / 5) and a model within the check's tolerance of the
// default step's; with its transits (which move by 0.111 sigma at 2x) the step stays the default.
TEST_F(FitCli, LargestStepChoiceWidensOnlyWhereTheCheckPasses) {
  const std::string source = SWARMFIT_SOURCE_DIR;
  const std::string params = " --params " + source + "/examples/demo/data/truth.csv";
  const Result with_transits = run("predict --config " + source + "/examples/demo/fit.cfg" + params + " --output " +
                                   (dir_ / "transits").string() + " step_choice=largest");
  ASSERT_EQ(with_transits.exit_code, 0) << with_transits.err;
  EXPECT_NE(with_transits.out.find("integration  step 0.49 d: "), std::string::npos) << with_transits.out;
  // The demo's configuration without its transit files.
  std::string text, line;
  {
    std::ifstream in(source + "/examples/demo/fit.cfg");
    bool skipping = false;
    while (std::getline(in, line)) {
      if (!line.empty() && line[0] == '[') skipping = line.rfind("[transits", 0) == 0;
      if (line.rfind("file = data/", 0) == 0) line = "file = " + source + "/examples/demo/data/" + line.substr(12);
      if (!skipping) text += line + "\n";
    }
  }
  const fs::path config = dir_ / "rv_only.cfg";
  std::ofstream(config) << text;
  auto model_rvs = [&](const std::string& choice) {
    const Result r = run("predict --config " + config.string() + params + " --output " + (dir_ / choice).string() +
                         " step_choice=" + choice);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("(ok: tolerance 0.1 sigma)"), std::string::npos) << r.out;
    if (choice == "largest") EXPECT_NE(r.out.find("step 1.96 d (the default x 4)"), std::string::npos) << r.out;
    return csv_column_pairs(dir_ / choice / "rv_data.csv", 5, 4);  // model, error
  };
  const auto refined = model_rvs("refine"), widest = model_rvs("largest");
  ASSERT_EQ(refined.size(), widest.size());
  ASSERT_GT(refined.size(), 10u);
  double worst = 0;
  for (std::size_t k = 0; k < refined.size(); ++k)
    worst = std::max(worst, std::abs(widest[k].first - refined[k].first) / refined[k].second);
  EXPECT_GT(worst, 0.0);   // a different step
  EXPECT_LT(worst, 0.15);  // within the check's tolerance over the two doublings (0.1 + 0.1 / 4 + ...)
  const Result bad = run("predict --config " + config.string() + params + " --output " + (dir_ / "bad").string() +
                         " step_choice=widest");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("step_choice"), std::string::npos) << bad.err;
}

// Fixed-step runs whose energy drifts get a status of their own (energy_error, 32), in the
// summary and the output file; the same run at a step that conserves energy stays ok.
TEST_F(FitCli, EnergyDriftPastTheToleranceHasItsOwnStatus) {
  const std::string source = SWARMFIT_SOURCE_DIR;
  const std::string base = "integrate --config " + source + "/examples/demo.cfg nsys=8 integrator=leapfrog ";
  const Result drifting = run(base + "time_step=0.5 output=" + (dir_ / "coarse.h5").string());
  EXPECT_EQ(drifting.exit_code, 0) << drifting.err;
  EXPECT_NE(drifting.out.find("status         energy_error 8"), std::string::npos) << drifting.out;
  EXPECT_NE(drifting.err.find("above energy_tolerance = 0.001"), std::string::npos) << drifting.err;
  {
    const hid_t file = H5Fopen((dir_ / "coarse.h5").string().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    EXPECT_EQ(swarmfit::h5::read_ints(file, "final/status"), std::vector<int>(8, 32));
    H5Fclose(file);
  }
  const Result fine = run(base + "time_step=1e-3");
  EXPECT_EQ(fine.exit_code, 0) << fine.err;
  EXPECT_NE(fine.out.find("status         ok 8"), std::string::npos) << fine.out;
  EXPECT_TRUE(fine.err.empty()) << fine.err;
}

// Runaway work refused before it starts (issue 37: these ran for ever or filled the disk).
TEST_F(FitCli, RunawayWorkIsRefusedBeforeItStarts) {
  const std::string source = SWARMFIT_SOURCE_DIR;
  const std::string demo = "integrate --config " + source + "/examples/demo.cfg nsys=4 ";
  expect_refused(run(demo + "time_step=1e-12"), "key 'time_step': ~6.28e+13 steps for system 0");
  expect_refused(run(demo + "integrator=rkck_adaptive max_time_step=1e-300"), "key 'max_time_step'");
  expect_refused(run(demo + "snapshot_interval=1e-9 output=" + (dir_ / "s.h5").string()),
                 "key 'snapshot_interval': 6.283e+10 snapshots would take");
  expect_refused(run("integrate --config " + source + "/examples/demo.cfg nsys=100000000000"),
                 "key 'nsys': the ensemble would need");
  const std::string close = write("ic.csv",
                                  "system,body,mass,x,y,z,vx,vy,vz\n0,0,1,0,0,0,0,0,0\n0,1,1e-3,1,0,0,0,1,0\n"
                                  "0,2,1e-3,1.000000000001,0,0,0,1,0\n");
  expect_refused(run("integrate integrator=rkck_adaptive initial_conditions=" + close),
                 "system 0: bodies 1 and 2 are 1e-12 apart");
  // The automatic budget of an adaptive run (max_steps = 0): 1000 times the estimate.
  const Result automatic = run(demo + "integrator=hermite_adaptive");
  EXPECT_EQ(automatic.exit_code, 0) << automatic.err;
  EXPECT_NE(automatic.out.find("step budget    6.29e+06 steps per system (automatic; max_steps)"), std::string::npos)
      << automatic.out;
  expect_refused(run("simulate --config " + source + "/examples/demo/truth.cfg --output " + (dir_ / "sim").string() +
                     " --span 1e9"),
                 "--span 1e+09 d takes ~2.04e+09 integration steps");
  expect_refused(
      run("predict --config " + source + "/examples/demo/fit.cfg --grid-step 1e-9 --output " + (dir_ / "p").string()),
      "--grid-step 1e-09 d");
}

// Damaged run files: one line, exit 2, no made-up numbers, no hang, no partial PNGs (issue 37: a
// NaN made summary spin for ever; a chain cut to 5 of 12 columns was summarised).
TEST_F(FitCli, DamagedRunFilesAreRefused) {
  ASSERT_EQ(run("fit --config " + fit_config() + small("in_run.h5")).exit_code, 0);
  const std::string good = (dir_ / "in_run.h5").string();
  auto damaged = [&](const std::string& name, const std::string& python) { return edited_copy(good, name, python); };
  const std::string nan = damaged("in_nan.h5", "f['chain/parameters'][3, 2, 1] = np.nan");
  const std::string cut = damaged("in_cut.h5",
                                  "p = f['chain/parameters'][:, :, :5]\ndel f['chain/parameters']\n"
                                  "f['chain/parameters'] = p");
  expect_refused(run("summary " + nan), "/chain/parameters: draw 3, walker 2, column 1 is not a finite number");
  expect_refused(run("summary " + cut), "/chain/parameters has 5 columns for 12 free parameters");
  expect_refused(run("plot " + nan + " --output " + (dir_ / "plots").string()), "is not a finite number");
  expect_refused(run("stability " + cut + " --output " + (dir_ / "s.csv").string()), "5 columns");
  const std::string text = write("in_text.h5", "not a run file\n");
  expect_refused(run("summary " + text), "cannot open as HDF5");
  expect_refused(run("plot " + text), "cannot open as HDF5");
}

// An answer that may be wrong says so: a run stopped before its stopping rule warns on stderr
// and records it in the run file; `summary` gives the fit's own table (its burn-in) and says so.
TEST_F(FitCli, UnconvergedFitsSayNoAndSummaryUsesTheFitsBurnIn) {
  const Result r = run("fit --config " + fit_config() + small("run.h5", " generations=60 ess_target=400"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("swarmfit: warning: not converged (NOT met: worst R-hat"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("stopping rule NOT met"), std::string::npos) << r.out;
  const swarmfit::RunRecord saved = swarmfit::read_run((dir_ / "run.h5").string());
  EXPECT_EQ(saved.attributes.at("stopping_rule").rfind("NOT met", 0), 0u);
  EXPECT_NE(saved.attributes.at("integration_check_best").find("(ok"), std::string::npos);
  EXPECT_NE(saved.attributes.at("command_line_settings").find("\ngenerations = 60\n"), std::string::npos)
      << saved.attributes.at("command_line_settings");
  const Result summary = run("summary " + (dir_ / "run.h5").string());
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("(the fit's burn-in)"), std::string::npos) << summary.out;
  // The posterior table, row for row, is the fit's closing table.
  const auto at = r.out.find("  parameter ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string fit_table = r.out.substr(at, r.out.find("  wrote", at) - at);
  ASSERT_FALSE(fit_table.empty()) << r.out;
  EXPECT_NE(summary.out.find(fit_table.substr(0, fit_table.size() / 2)), std::string::npos) << fit_table << "\n---\n"
                                                                                            << summary.out;
  const Result half = run("summary " + (dir_ / "run.h5").string() + " --burn-in -1");
  EXPECT_NE(half.out.find("(--burn-in -1)"), std::string::npos) << half.out;
}

// A Rossiter-McLaughlin night: 8 rows inside one transit of a transiting hot Jupiter (P = 3 d,
// a transit of ~0.12 d) are dropped, the 30 spread over the orbit and a single in-transit row kept.
TEST_F(CatalogCli, RossiterMcLaughlinNightsAreDropped) {
  const fs::path folder = dir_ / "rm";
  fs::create_directories(folder);
  std::ostringstream vels;
  vels << "# value_units = M/S\n" << std::fixed << std::setprecision(5);
  const double tc = 2455000.0, period = 3.0;
  auto rv = [&](double t) { return 200.0 * -std::sin(2 * M_PI * (t - tc) / period); };
  for (int k = 0; k < 30; ++k) {  // 1.37 d apart: phases spread, none within 0.09 d of a transit
    double t = tc + 0.4 + 1.37 * k;
    const double phase = std::fmod(t - tc, period);
    if (phase < 0.2 || phase > period - 0.2) t += 0.5;
    vels << t << " " << rv(t) << " 5.0\n";
  }
  vels << tc + 30 * period + 0.01 << " " << rv(tc + 30 * period + 0.01) << " 5.0\n";  // one row in a transit: kept
  for (int k = 0; k < 8; ++k) {  // one night through a transit, every 20 min
    const double t = tc + 50 * period - 0.07 + k * 0.014;
    vels << t << " " << rv(t) + 30.0 * std::sin(M_PI * (k - 3.5) / 8) << " 5.0\n";
  }
  std::ofstream(folder / "Rm_1_ESO.vels") << vels.str();
  std::ofstream(folder / "Rm.sys") << "# Data from http://exoplanetarchive.ipac.caltech.edu/\nName\tRm\nMass\t1.0\n"
                                      "RV[]\tRm_1_ESO.vels\n";
  std::ofstream(folder / "planets.csv")
      << "system,planet,period_days,K_ms,e,omega_deg,tperi_or_tc,time_kind,transiting,a_au,mstar_K_msun\n"
         "Rm,b,3.0,200,0,,2455000.0,tc,1,0.0408,1.0\n";
  const std::string catalog = write("rm.cfg", "folder = rm\nplanets = planets.csv\n");
  const fs::path out = dir_ / "rm_out";
  const Result r = run("catalog --check --config " + catalog + " --output " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string report = slurp(out / "report.txt");
  EXPECT_NE(report.find("8 rows (lines 33, 34, 35, 36, 37 and 3 more) inside transits of planet b"), std::string::npos)
      << report;
  EXPECT_NE(report.find("a Rossiter-McLaughlin sequence, which the model does not describe: dropped"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("31 RVs"), std::string::npos) << report;
}

// Files out of phase with a transit ephemeris: a hot Jupiter (P = 3 d, K = 200 m/s) with one file
// in phase and one whose times are 1000.5 d early (the archive's XO-5 Keck file is 4000 d early):
// the shifted file is not used. A second star whose every file is a quarter period off the table's
// epoch: the epoch is reported as off and the files kept.
TEST_F(CatalogCli, FilesOutOfPhaseWithTheTransitsAreNotUsed) {
  const fs::path folder = dir_ / "phase";
  fs::create_directories(folder);
  const double tc = 2455000.0, period = 3.0;
  auto file = [&](double shift, double phase_off, double start) {
    std::ostringstream vels;
    vels << "# value_units = M/S\n" << std::fixed << std::setprecision(5);
    for (int k = 0; k < 20; ++k) {
      // Phases spread over the orbit; irregular times, other ones per file (not the same spectra).
      const double t = tc + start + 1.91 * k + 0.4 * std::sin(7.3 * k + 13 * start);
      vels << t - shift << " " << 200.0 * -std::sin(2 * M_PI * (t - tc) / period + phase_off) + 3 * std::cos(k)
           << " 5.0\n";
    }
    return vels.str();
  };
  std::ofstream(folder / "Hot_1_HET.vels") << file(0, 0, 0.37);
  std::ofstream(folder / "Hot_2_KECK.vels") << file(1000.5, 0, 100.83);
  std::ofstream(folder / "Off_1_HET.vels") << file(0, M_PI / 2, 0.37);
  std::ofstream(folder / "Off_2_KECK.vels") << file(0, M_PI / 2, 100.83);
  std::ofstream(folder / "Hot.sys") << "Name\tHot\nMass\t1.0\nRV[]\tHot_1_HET.vels\nRV[]\tHot_2_KECK.vels\n";
  std::ofstream(folder / "Off.sys") << "Name\tOff\nMass\t1.0\nRV[]\tOff_1_HET.vels\nRV[]\tOff_2_KECK.vels\n";
  std::ofstream(folder / "planets.csv")
      << "system,planet,period_days,K_ms,e,omega_deg,tperi_or_tc,time_kind,transiting,a_au,mstar_K_msun\n"
         "Hot,b,3.0,200,0,,2455000.0,tc,1,0.0408,1.0\nOff,b,3.0,200,0,,2455000.0,tc,1,0.0408,1.0\n";
  const std::string catalog = write("phase.cfg", "folder = phase\nplanets = planets.csv\n");
  const fs::path out = dir_ / "phase_out";
  const Result r = run("catalog --check --config " + catalog + " --output " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string report = slurp(out / "report.txt");
  const std::size_t hot = report.find("Hot_2_KECK.vels"), off = report.find("Off_1_HET.vels");
  ASSERT_NE(hot, std::string::npos) << report;
  ASSERT_NE(off, std::string::npos) << report;
  EXPECT_NE(report.find("20 rows, not used", hot), std::string::npos) << report;
  EXPECT_NE(report.find("out of phase with planet b's transits (another file is in phase): its times are shifted, "
                        "not used",
                        hot),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("out of phase", report.find("Hot_1_HET.vels")),
            hot < off ? report.find("out of phase", hot) : std::string::npos)
      << "the file in phase is not flagged\n"
      << report;
  EXPECT_NE(report.find("90 +- ", off), std::string::npos) << report;
  EXPECT_NE(report.find("the table's epoch is off (the fit's tc prior spans a period); kept", off), std::string::npos)
      << report;
}

// A broken description or a key no target takes: one line, exit 2, nothing written.
TEST_F(CatalogCli, BadDescriptionIsOneLineExitTwoAndNoOutput) {
  const std::string catalog = make_catalog();
  expect_refused(run("catalog --jobs 0 --config " + catalog + " --output " + (dir_ / "x").string()),
                 "jobs (--jobs) must be 1 to 1024");
  expect_refused(run("catalog --pack maybe --config " + catalog + " --output " + (dir_ / "x").string()),
                 "pack (--pack) must be auto, on or off, not 'maybe'");
  expect_refused(run("catalog --config " + catalog + " --output " + (dir_ / "x").string() + " walkrs=30"),
                 "command line: unknown key 'walkrs' (did you mean 'walkers'?)");
  expect_refused(run("catalog --config " + write("bad.cfg", "folder = nowhere\nplanets = p.csv\n") + " --output " +
                     (dir_ / "x").string()),
                 "folder '");
  expect_refused(run("catalog --config " + write("bad2.cfg", "folder = in_catalog\nplanets = planets.csv\n[star x]\n") +
                     " --output " + (dir_ / "x").string()),
                 "bad2.cfg:3: unknown section type 'star'");
}

// A CSV table of targets (their files beside it) instead of .sys files: read and checked the same
// way; a broken row is refused in one line naming it.
TEST_F(CatalogCli, TargetsFromACsvTable) {
  make_catalog();
  write("in_catalog/targets.csv", "target,star_mass,rv_files\nTabAlpha,1.0,Alpha_1_KECK.vels; Alpha_2_3.6M.vels\n");
  write("in_catalog/table_planets.csv",
        "system,planet,period_days,K_ms,e,omega_deg,tperi_or_tc,time_kind\nTabAlpha,b,5.0,50,,,2455001.3,tc\n");
  const std::string table =
      write("table.cfg", "targets = in_catalog/targets.csv\nplanets = in_catalog/table_planets.csv\n");
  const Result r = run("catalog --check --config " + table + " --output " + (dir_ / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1 targets, 0 skipped"), std::string::npos) << r.out;
  const std::string report = slurp(dir_ / "out" / "report.txt");
  EXPECT_NE(report.find("TabAlpha (TabAlpha, 1 Msun from the target table, 80 RVs): fitted"), std::string::npos)
      << report;
  fs::remove_all(dir_ / "out");
  write("in_catalog/targets.csv", "target,star_mass,rv_files\nTabAlpha,heavy,Alpha_1_KECK.vels\n");
  expect_refused(run("catalog --check --config " + table + " --output " + (dir_ / "out").string()),
                 "targets.csv:2: column 'star_mass': 'heavy' is not a mass > 0 (Msun)");
}

// A target whose run file was written for another configuration (the keys changed since) is
// fitted again from the start, not refused; a target with its result is kept as it is.
TEST_F(CatalogCli, ARunFileOfAnotherConfigurationIsStartedAgain) {
  const std::string catalog = make_catalog();
  const fs::path out = dir_ / "out";
  ASSERT_EQ(run("catalog --no-report --config " + catalog + " --output " + out.string() + kShort).exit_code, 0);
  fs::remove(out / "targets" / "Alpha" / "result.csv");  // as if stopped in its fit
  // Another seed in the description: written into each target's configuration.
  const std::string reseeded = write("reseeded.cfg", slurp(catalog) + "seed = 5\n");
  const Result again = run("catalog --no-report --config " + reseeded + " --output " + out.string() +
                           replace(kShort, "generations=300", "generations=310"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("Alpha: its configuration changed since its run file was written: fitted again"),
            std::string::npos)
      << again.out;
  EXPECT_NE(again.out.find("1 fitted now, 2 kept from before, 0 failed"), std::string::npos) << again.out;
  EXPECT_EQ(swarmfit::read_run((out / "targets" / "Alpha" / "run.h5").string()).state.generation, 310);
}

// A handful of real targets of ../shared/catalogs/exoplanet-archive-rv (skipped where it is absent),
// with short settings: each planet's P and K within 3 sigma or 10% of the catalog's planet table.
TEST_F(CatalogCli, ArchiveHandfulAgreesWithThePlanetTable) {
  const fs::path folder = fs::path(SWARMFIT_SOURCE_DIR) / ".." / "shared" / "catalogs" / "exoplanet-archive-rv";
  if (!fs::exists(folder / "planets.csv")) GTEST_SKIP() << "no ../shared/catalogs/exoplanet-archive-rv here";
  const std::string description = write("archive.cfg", "folder = " + folder.string() + "\nplanets = planets.csv\n");
  const fs::path out = dir_ / "out";
  const Result r = run("catalog --no-report --config " + description + " --output " + out.string() +
                       " --targets 11Com,14And,14Her,42Dra,BD+144559 --jobs 2 generations=1500 optimize=100 "
                       "threads=1");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::istringstream lines(slurp(out / "summary.csv"));
  std::string line;
  std::getline(lines, line);
  int planets = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 17u) << line;
    if (f[2].rfind("not fitted", 0) == 0) continue;  // (14 Her c: P longer than the data)
    ++planets;
    const double table_p = std::stod(f[9]), table_k = std::stod(f[10]);
    const double p = std::stod(f[11]), sd_p = (std::stod(f[13]) - std::stod(f[12])) / 2;
    const double k = std::stod(f[14]), sd_k = (std::stod(f[16]) - std::stod(f[15])) / 2;
    EXPECT_LE(std::abs(p - table_p), std::max(3 * sd_p, 0.1 * table_p)) << line;
    EXPECT_LE(std::abs(k - table_k), std::max(3 * sd_k, 0.1 * table_k)) << line;
  }
  EXPECT_EQ(planets, 5);
}

// GJ 581 of the archive (skipped where it is absent): at the planet table's values its model does
// not settle as the step shrinks (0.1 data errors are never reached), so the step check refuses it;
// it stops where the finer model would take more than kMaxRefinedSteps, two halvings before its
// last (kMaxStepHalvings), instead of integrating the two costliest models of the refinement.
TEST_F(CatalogCli, ArchiveTargetWhoseModelNeverSettlesIsRefusedAtTheRefinementCap) {
  const fs::path folder = fs::path(SWARMFIT_SOURCE_DIR) / ".." / "shared" / "catalogs" / "exoplanet-archive-rv";
  if (!fs::exists(folder / "GJ581.sys")) GTEST_SKIP() << "no ../shared/catalogs/exoplanet-archive-rv here";
  const std::string description = write("archive.cfg", "folder = " + folder.string() + "\nplanets = planets.csv\n");
  const fs::path out = dir_ / "out";
  const Result r = run("catalog --check --config " + description + " --output " + out.string() + " --targets GJ581");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const std::string report = slurp(out / "report.txt");
  const std::size_t at = report.find("GJ581 (");
  ASSERT_NE(at, std::string::npos) << report;
  const std::string line = report.substr(at, report.find('\n', at) - at);
  EXPECT_NE(line.find("skipped: its configuration is refused"), std::string::npos) << line;
  EXPECT_NE(line.find("a finer step's model takes more than 1e7 steps"), std::string::npos) << line;
  const std::size_t step_at = line.find("mvs at ");
  ASSERT_NE(step_at, std::string::npos) << line;
  const double step = std::stod(line.substr(step_at + 7));
  const double smallest = 3.149 / 20 / 1024;  // (GJ 581 e's period over 20, halved kMaxStepHalvings times)
  EXPECT_GE(step, 3.9 * smallest) << line;
}

// Three targets fitted at once (--jobs 3, threads) give the summary of one after another.
TEST_F(CatalogCli, TargetsFittedAtOnceGiveTheSummaryOfOneAfterAnother) {
  const std::string catalog = make_catalog();
  const fs::path one = dir_ / "one", three = dir_ / "three";
  ASSERT_EQ(run("catalog --no-report --config " + catalog + " --output " + one.string() + kShort).exit_code, 0);
  const Result r = run("catalog --no-report --jobs 3 --config " + catalog + " --output " + three.string() + kShort);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("3 fitted now, 0 kept from before, 0 failed"), std::string::npos) << r.out;
  EXPECT_EQ(summary_without_time(three), summary_without_time(one));
  // Packed: the three fits' likelihood batches share launches (likelihood_packing.hpp), here on the
  // CPU, and the chains are those of the fits alone.
  const fs::path packed = dir_ / "packed";
  const Result p =
      run("catalog --no-report --jobs 3 --pack on --config " + catalog + " --output " + packed.string() + kShort);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const std::size_t at = p.out.find("packing: ");
  ASSERT_NE(at, std::string::npos) << p.out;
  long batches = 0, rounds = 0;
  ASSERT_EQ(std::sscanf(p.out.c_str() + at, "packing: %ld batches of the targets in %ld rounds", &batches, &rounds), 2);
  EXPECT_LT(rounds, batches) << "no round held more than one target's batch: " << p.out.substr(at, 200);
  // Where the longest targets' time went, each with its batches.
  const std::size_t longest = p.out.find("packing, the longest targets: ");
  ASSERT_NE(longest, std::string::npos) << p.out;
  char name[64];
  long target_batches = 0;
  double waiting = -1, launched = -1;
  ASSERT_EQ(std::sscanf(p.out.c_str() + longest, "packing, the longest targets: %63s %ld batches, %lf s waiting, %lf s",
                        name, &target_batches, &waiting, &launched),
            4)
      << p.out.substr(longest, 300);
  EXPECT_GT(target_batches, 0);
  EXPECT_LE(target_batches, batches);
  EXPECT_GE(waiting, 0.0);
  EXPECT_GE(launched, 0.0);
  EXPECT_EQ(summary_without_time(packed), summary_without_time(one));
  for (const char* target : {"Alpha", "Delta", "Epsilon"}) {
    const swarmfit::RunRecord a = swarmfit::read_run((packed / "targets" / target / "run.h5").string());
    const swarmfit::RunRecord b = swarmfit::read_run((one / "targets" / target / "run.h5").string());
    EXPECT_EQ(a.chain.parameters, b.chain.parameters) << target;  // bitwise (== on doubles)
    EXPECT_EQ(a.chain.log_likelihood, b.chain.log_likelihood) << target;
    EXPECT_GT(a.chain.num_draws(), 0) << target;
  }
}

// Under mpirun with 2 ranks (Open MPI; CI runs it on the CPU) the targets are shared out and the
// summary is the one process's, the fits' seconds aside.
TEST_F(CatalogCli, TwoMpiRanksGiveTheSummaryOfOne) {
  if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun (Open MPI)";
  const std::string catalog = make_catalog();
  const fs::path one = dir_ / "one", two = dir_ / "two";
  ASSERT_EQ(run("catalog --no-report --config " + catalog + " --output " + one.string() + kShort).exit_code, 0);
  const std::string command =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 " +
      std::string(SWARMFIT_BINARY) + " catalog --no-report --config " + catalog + " --output " + two.string() + kShort +
      " > " + (dir_ / "mpi.log").string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << slurp(dir_ / "mpi.log");
  const std::string log = slurp(dir_ / "mpi.log");
  EXPECT_NE(log.find("5 targets, 2 skipped"), std::string::npos) << log;
  EXPECT_EQ(summary_without_time(two), summary_without_time(one)) << log;
  // Packed, each rank fits a fixed share balanced by cost (not the queue): both fit, same summary.
  const fs::path packed = dir_ / "packed";
  const std::string packed_command =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 " +
      std::string(SWARMFIT_BINARY) + " catalog --no-report --jobs 2 --pack on --config " + catalog + " --output " +
      packed.string() + kShort + " > " + (dir_ / "packed.log").string() + " 2>&1";
  ASSERT_EQ(std::system(packed_command.c_str()), 0) << slurp(dir_ / "packed.log");
  const std::string packed_log = slurp(dir_ / "packed.log");
  EXPECT_EQ(packed_log.find(" 0 fitted now"), std::string::npos) << packed_log;  // no rank idle
  EXPECT_NE(packed_log.find("rank 1: "), std::string::npos) << packed_log;
  EXPECT_EQ(summary_without_time(packed), summary_without_time(one)) << packed_log;
}

// --host-targets N: of the targets on backend=cuda, the N whose one system's integration is
// longest are fitted on the host's CPU cores, each with the chain it gives alone on the CPU; the
// others stay on the GPU (without a device they fail, and say so). Over 2 MPI ranks the host
// targets are shared out and the summary is the one process's.
TEST_F(CatalogCli, HostTargetsAreFittedOnTheCpuWithTheirOwnChains) {
  const std::string catalog = make_catalog();
  const fs::path cpu = dir_ / "cpu", host = dir_ / "host";
  ASSERT_EQ(run("catalog --no-report --config " + catalog + " --output " + cpu.string() + kShort).exit_code, 0);
  const std::string args = "catalog --no-report --jobs 3 --host-targets 2 --config " + catalog;
  const Result r = run(args + " --output " + host.string() + kShort + " backend=cuda");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string lead = "fitted on the host's CPU cores (threads): ";
  const std::size_t at = r.out.find(lead);
  ASSERT_NE(at, std::string::npos) << r.out;
  std::set<std::string> names;  // "Alpha (1), Delta (1)"
  std::stringstream line(r.out.substr(at + lead.size(), r.out.find('\n', at) - at - lead.size()));
  for (std::string item; std::getline(line, item, ',');) {
    std::string name;
    int threads = 0;
    std::stringstream(item) >> name;
    ASSERT_EQ(std::sscanf(item.c_str() + item.find('('), "(%d)", &threads), 1) << item;
    EXPECT_GE(threads, 1) << item;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), 2u) << r.out;
  const std::string summary = slurp(host / "summary.csv");
  for (const std::string target : {"Alpha", "Delta", "Epsilon"}) {
    const fs::path file = host / "targets" / target / "run.h5";
    if (names.count(target)) {
      const swarmfit::RunRecord a = swarmfit::read_run(file.string());
      const swarmfit::RunRecord b = swarmfit::read_run((cpu / "targets" / target / "run.h5").string());
      EXPECT_EQ(a.attributes.at("backend"), "cpu") << target;
      EXPECT_EQ(a.chain.parameters, b.chain.parameters) << target;  // bitwise (== on doubles)
      EXPECT_EQ(a.chain.log_likelihood, b.chain.log_likelihood) << target;
      EXPECT_GT(a.chain.num_draws(), 0) << target;
    } else if (fs::exists(file)) {
      EXPECT_EQ(swarmfit::read_run(file.string()).attributes.at("backend"), "cuda") << target;  // a GPU here
    } else {
      EXPECT_NE(summary.find("\n" + target + ",b,failed: backend=cuda"), std::string::npos) << summary;
    }
  }
  const Result bad = run(args + " --output " + (dir_ / "bad").string() + " --host-targets -1");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--host-targets"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "bad"));
  if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun (Open MPI)";
  const fs::path two = dir_ / "two";
  const std::string command =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 " +
      std::string(SWARMFIT_BINARY) + " " + args + " --pack on --output " + two.string() + kShort + " backend=cuda > " +
      (dir_ / "mpi.log").string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << slurp(dir_ / "mpi.log");
  const std::string log = slurp(dir_ / "mpi.log");
  // One host target a rank.
  EXPECT_NE(log.find("rank 0: " + lead), std::string::npos) << log;
  EXPECT_NE(log.find("rank 1: " + lead), std::string::npos) << log;
  EXPECT_EQ(summary_without_time(two), summary_without_time(host)) << log;
}

// Killed with SIGKILL at random moments and started again, the catalog ends with the summary of an
// uninterrupted run (the fits' seconds aside) and never refits a finished target.
TEST_F(CatalogCli, KilledAtRandomAndResumedGivesTheSameSummary) {
  const std::string catalog = make_catalog();
  const fs::path reference = dir_ / "out_ref";
  ASSERT_EQ(run("catalog --no-report --config " + catalog + " --output " + reference.string() + kShort).exit_code, 0);
  const std::string expected = summary_without_time(reference);

  const fs::path out = dir_ / "out_killed";
  std::vector<std::string> args = {"catalog", "--config", catalog, "--output", out.string(), "--no-report"};
  std::istringstream words(kShort);
  for (std::string w; words >> w;) args.push_back(w);
  swarmfit::CounterRandom random(20261126);
  // Finished targets (their result.csv) so far: an attempt that adds none on a loaded machine
  // lengthens the next ones, so that the test cannot starve.
  auto finished = [&] {
    int count = 0;
    if (fs::exists(out))
      for (const auto& entry : fs::recursive_directory_iterator(out)) count += entry.path().filename() == "result.csv";
    return count;
  };
  int kills = 0, code = -1, stalled = 0;
  for (int attempt = 0; attempt < 200 && code != 0; ++attempt) {
    // Kills from 20 ms (mid-start) to 1.2 s (a target or two done): a target's fit must fit in
    // the window now and then for the run to get anywhere, also on a slow build.
    const int delay =
        (20 + static_cast<int>(random.below(1200, swarmfit::RandomPurpose::kTest, attempt, 0, 0))) * (1 + stalled / 4);
    const int before = finished();
    code = run_and_kill(args, delay, (dir_ / ("catalog" + std::to_string(attempt) + ".log")).string());
    kills += code == -1;
    stalled = finished() > before ? 0 : stalled + 1;
  }
  ASSERT_EQ(code, 0);
  EXPECT_GE(kills, 1);
  EXPECT_EQ(summary_without_time(out), expected);
  for (const auto& entry : fs::recursive_directory_iterator(out))
    EXPECT_EQ(entry.path().string().find(".partial."), std::string::npos) << "left behind: " << entry.path();
}

}  // namespace

// ---- swarmfit nbody (issue 34): the large-N engine's command
namespace {

class NbodyCli : public Cli {
 protected:
  // Every body's full state and time in a run's state.h5.
  std::vector<double> state(const std::string& folder) {
    swarmfit::h5::Handle f(H5Fopen((dir_ / folder / "state.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), folder);
    std::vector<double> v = swarmfit::h5::read_doubles(f, "state");
    const std::vector<double> t = swarmfit::h5::read_doubles(f, "body_time");
    v.insert(v.end(), t.begin(), t.end());
    v.push_back(swarmfit::h5::read_double_attribute(f, "time"));
    return v;
  }
  std::string out(const std::string& folder) { return " output=" + (dir_ / folder).string(); }
};

TEST_F(NbodyCli, WritesSnapshotsALogAndTheStateAndConservesEnergy) {
  const Result r = run("nbody n=300 t_end=0.5 snapshot_interval=0.25 softening=0.01 order=6 -q" + out("o"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"snapshot_000000.h5", "snapshot_000001.h5", "snapshot_000002.h5", "log.csv", "state.h5"})
    EXPECT_TRUE(fs::exists(dir_ / "o" / f)) << f;
  std::ifstream log(dir_ / "o" / "log.csv");
  std::string line, last;
  int rows = 0;
  std::getline(log, line);
  EXPECT_EQ(line.rfind("snapshot,time,energy,", 0), 0u) << line;
  while (std::getline(log, line)) ++rows, last = line;
  EXPECT_EQ(rows, 3);
  // energy_error is the sixth column: order 6 at the default eta keeps it below 1e-7 here.
  std::stringstream fields(last);
  std::string field;
  for (int k = 0; k < 6; ++k) std::getline(fields, field, ',');
  EXPECT_LT(std::fabs(std::stod(field)), 1e-7) << last;
  EXPECT_NE(r.out.find("swarmfit nbody: 300 bodies"), std::string::npos) << r.out;
}

// Killed (SIGKILL) at random moments and resumed until done, the run ends bitwise where an
// uninterrupted one does; so does one stopped by SIGINT between snapshots (the state then holds
// bodies at their own times).
TEST_F(NbodyCli, KilledAtRandomAndResumedEndsBitwiseWhereAnUninterruptedRunDoes) {
  const std::string keys = " n=1500 t_end=1 snapshot_interval=0.125 softening=0.01 -q threads=1";
  ASSERT_EQ(run("nbody" + keys + out("reference")).exit_code, 0);
  const std::vector<double> expected = state("reference");
  std::mt19937 random(5);
  for (int signal : {SIGKILL, SIGINT}) {
    const std::string folder = signal == SIGKILL ? "killed" : "stopped";
    bool started = false;
    for (int attempt = 0; attempt < 40; ++attempt) {
      std::vector<std::string> args = {"nbody"};
      // (overwrite before the first state: a start killed before writing it leaves a folder that a
      // plain run refuses, as it should)
      std::istringstream words(keys + out(folder) + (started ? " --resume" : " overwrite=true"));
      for (std::string w; words >> w;) args.push_back(w);
      const pid_t pid = spawn(args);
      usleep(std::uniform_int_distribution<int>(50000, 400000)(random));
      kill(pid, signal);
      int status = 0;
      waitpid(pid, &status, 0);
      if (fs::exists(dir_ / folder / "state.h5")) started = true;
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) break;  // finished before the signal
    }
    if (!started) {
      ASSERT_EQ(run("nbody" + keys + out(folder) + " overwrite=true").exit_code, 0);
    } else {
      const Result rest = run("nbody" + keys + out(folder) + " --resume");
      ASSERT_TRUE(rest.exit_code == 0 || rest.exit_code == 2) << rest.err;  // 2: it had finished already
    }
    EXPECT_EQ(state(folder), expected) << "after " << (signal == SIGKILL ? "SIGKILL" : "SIGINT");
  }
}

TEST_F(NbodyCli, TwoMpiRanksAgreeWithOneToRoundOff) {
  if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun (Open MPI)";
  const std::string keys = " n=800 t_end=0.25 snapshot_interval=0.25 softening=0.01 -q threads=1";
  ASSERT_EQ(run("nbody" + keys + out("one")).exit_code, 0);
  const std::string command =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 " +
      std::string(SWARMFIT_BINARY) + " nbody" + keys + out("two") + " > " + (dir_ / "mpi.log").string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  const std::vector<double> one = state("one"), two = state("two");
  ASSERT_EQ(one.size(), two.size());
  // Positions and velocities (the first 6 of each body's 18 state values); the block times and
  // steps must be the same. The partial forces of two slices are added in another order:
  // round-off, grown over ~800 block steps of a chaotic system (measured 2e-16 in the positions;
  // the interpolated snap and crackle, divided by powers of the step, differ by ~1e-8).
  const std::size_t bodies = 800;
  double worst = 0;
  for (std::size_t i = 0; i < bodies; ++i)
    for (int f = 0; f < 6; ++f) {
      const double a = one[18 * i + f], b = two[18 * i + f];
      worst = std::max(worst, std::fabs(a - b) / (1 + std::fabs(a)));
    }
  EXPECT_LT(worst, 1e-12);
  for (std::size_t k = 18 * bodies; k < one.size(); ++k) EXPECT_EQ(one[k], two[k]) << "body times";
}

TEST_F(NbodyCli, BadInputIsOneLineAndNothingWritten) {
  expect_refused(run("nbody order=5" + out("x")), "'order'");
  expect_refused(run("nbody max_step=0.1" + out("x")), "'max_step'");
  expect_refused(run("nbody t_end=0.3" + out("x")), "'t_end'");
  expect_refused(run("nbody snapshot_interval=0.01" + out("x")), "'snapshot_interval'");
  expect_refused(run("nbody n=1" + out("x")), "'n'");
  expect_refused(run("nbody softening=-1" + out("x")), "'softening'");
  expect_refused(run("nbody backend=opencl" + out("x")), "'backend'");
  expect_refused(run("nbody ic=file" + out("x")), "'ic'");
  expect_refused(run("nbody bogus=1" + out("x")), "bogus");
  const std::string csv = write("ic.csv", "mass,x,y,z,vx,vy,vz\n1,0,0,0,0,0,0\n1e-3,1,0,0,0,1\n");
  expect_refused(run("nbody ic=file ic_file=" + csv + out("x")), "ic.csv:3");
  expect_refused(run("nbody --resume" + out("x")), "state.h5");
  fs::create_directories(dir_ / "in_used");
  std::ofstream(dir_ / "in_used" / "keep") << "x";
  expect_refused(run("nbody" + out("in_used")), "overwrite");
  EXPECT_TRUE(fs::exists(dir_ / "in_used" / "keep"));
}

TEST_F(NbodyCli, PlotDrawsTheEnergyTheRadiiAndASnapshot) {
  ASSERT_EQ(run("nbody n=200 t_end=0.25 snapshot_interval=0.125 softening=0.01 -q" + out("o")).exit_code, 0);
  const Result r = run("plot " + (dir_ / "o").string() + " --output " + (dir_ / "p").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"energy.png", "lagrangian.png", "snapshot.png"}) {
    EXPECT_TRUE(fs::exists(dir_ / "p" / f)) << f;
    EXPECT_GT(fs::file_size(dir_ / "p" / f), 5000u) << f;
  }
  // A damaged log is one line and exit 2, and no partial set of plots.
  std::ofstream(dir_ / "o" / "log.csv") << "snapshot,time\n0,0\n";
  const Result bad = run("plot " + (dir_ / "o").string() + " --output " + (dir_ / "q").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "q"));
}

TEST_F(NbodyCli, TheExampleConfigurationsRun) {
  const std::string examples = std::string(SWARMFIT_SOURCE_DIR) + "/examples/nbody/";
  const Result plummer =
      run("nbody --config " + examples + "plummer.cfg n=256 t_end=0.25 snapshot_interval=0.25 -q" + out("p"));
  EXPECT_EQ(plummer.exit_code, 0) << plummer.err;
  const Result belt =
      run("nbody --config " + examples + "kuiper_belt.cfg kuiper_belt=20 t_end=10 snapshot_interval=10 -q" + out("k"));
  EXPECT_EQ(belt.exit_code, 0) << belt.err;
  EXPECT_NE(belt.out.find("29 bodies (9 massive)"), std::string::npos) << belt.out;
}

// particle_mode = tape: the giant planets on their block steps, the belt advanced alone through
// their recorded steps. Its particles end where the combined integration (particle_mode = block)
// puts them, to round-off; a run stopped by a resume at half-time ends bitwise where a straight
// run does; the particles' status is kept in the snapshots and the state.
TEST_F(NbodyCli, TapeParticlesFollowTheBlockStepsAndResumeBitwise) {
  const std::string keys =
      " ic=solar_system planets=giants kuiper_belt=40 order=6 eta=0.1 max_step=1 snapshot_interval=16 -q";
  ASSERT_EQ(run("nbody" + keys + " t_end=64" + out("in_block")).exit_code, 0);
  const Result tape = run("nbody" + keys + " t_end=64 particle_mode=tape r_max=1000" + out("in_tape"));
  ASSERT_EQ(tape.exit_code, 0) << tape.err;
  EXPECT_NE(tape.out.find("45 bodies (5 massive)"), std::string::npos) << tape.out;
  const std::vector<double> block = state("in_block"), taped = state("in_tape");
  ASSERT_EQ(block.size(), taped.size());
  double worst = 0;
  for (std::size_t i = 0; i < 45; ++i)
    for (int f = 0; f < 3; ++f) worst = std::max(worst, std::fabs(block[18 * i + f] - taped[18 * i + f]) / 50.0);
  EXPECT_LT(worst, 1e-12);
  ASSERT_EQ(run("nbody" + keys + " t_end=32 particle_mode=tape r_max=1000" + out("in_half")).exit_code, 0);
  const Result rest = run("nbody" + keys + " t_end=64 particle_mode=tape r_max=1000 --resume" + out("in_half"));
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  EXPECT_EQ(state("in_half"), taped);
  swarmfit::h5::Handle f(H5Fopen((dir_ / "in_tape" / "snapshot_000004.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "s");
  const std::vector<long> status = swarmfit::h5::read_longs(f, "status");
  ASSERT_EQ(status.size(), 45u);
  EXPECT_EQ(std::count(status.begin(), status.end(), 0L), 45);
  // The keys that belong to the tape, refused elsewhere; and a tape run resumed without it (the
  // folders above are named in_* so that the refusals' check of the folder passes them).
  expect_refused(run("nbody r_max=10" + out("x")), "'r_max'");
  expect_refused(run("nbody particle_mode=fast" + out("x")), "'particle_mode'");
  expect_refused(run("nbody planets=giants" + out("x")), "'planets'");
  expect_refused(run("nbody" + keys + " t_end=80 --resume" + out("in_half")), "'particle_mode'");
}

TEST_F(NbodyCli, FromAFileWithTestParticles) {
  // A star, a planet and a massless particle: mass 0 rows become test particles, whatever their
  // place in the file.
  const std::string csv =
      write("ic.csv", "mass,x,y,z,vx,vy,vz\n0,2,0,0,0,0.7071067811865476,0\n1,0,0,0,0,0,0\n1e-3,1,0,0,0,1,0\n");
  const Result r = run("nbody ic=file ic_file=" + csv + " t_end=1 snapshot_interval=1 max_step=0.0625 -q" + out("f"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("3 bodies (2 massive)"), std::string::npos) << r.out;
}

}  // namespace

// ---- swarmfit pm (issue 35): the particle-mesh engine's command
namespace {

class PmCli : public Cli {
 protected:
  std::string out(const std::string& folder) { return " output=" + (dir_ / folder).string(); }
  std::vector<double> positions(const std::string& file) {
    swarmfit::h5::Handle f(H5Fopen((dir_ / file).c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), file);
    std::vector<double> v = swarmfit::h5::read_doubles(f, "position");
    const std::vector<double> w = swarmfit::h5::read_doubles(f, "velocity");
    v.insert(v.end(), w.begin(), w.end());
    return v;
  }
};

// Snapshots, log and state; an FP32 run stopped half-way and resumed ends bitwise where a straight
// one does (its particles are kept exactly, as doubles); momentum stays at round-off.
TEST_F(PmCli, WritesSnapshotsALogAndResumesBitwise) {
  const std::string keys = "pm n=3000 mesh=32 box=12 dt=0.05 snapshot_interval=0.25 precision=single -q";
  const Result r = run(keys + " t_end=1" + out("a"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("swarmfit pm: 3000 particles, 32^3 mesh (isolated, fft, tsc), single"), std::string::npos)
      << r.out;
  for (const char* f : {"snapshot_000000.h5", "snapshot_000004.h5", "log.csv", "state.h5"})
    EXPECT_TRUE(fs::exists(dir_ / "a" / f)) << f;
  std::ifstream log(dir_ / "a" / "log.csv");
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line.rfind("snapshot,time,steps,kinetic,potential,energy,energy_error,px,py,pz,", 0), 0u) << line;
  int rows = 0;
  while (std::getline(log, line)) {
    ++rows;
    std::stringstream fields(line);
    std::vector<std::string> v;
    for (std::string field; std::getline(fields, field, ',');) v.push_back(field);
    ASSERT_GE(v.size(), 10u);
    for (int c = 7; c < 10; ++c) EXPECT_LT(std::fabs(std::stod(v[c])), 1e-6) << line;  // momentum (FP32)
  }
  EXPECT_EQ(rows, 5);
  ASSERT_EQ(run(keys + " t_end=0.5" + out("b")).exit_code, 0);
  const Result rest = run(keys + " t_end=1 --resume" + out("b"));
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  EXPECT_EQ(positions("a/snapshot_000004.h5"), positions("b/snapshot_000004.h5"));
}

// Under mpirun each rank holds a slab of the mesh and the particles in it (FFTW-MPI): 1, 2 and 3
// ranks end where one process does to round-off (the transforms and the ghost planes' sums are
// other orders of the same additions: measured 2e-15 after 20 steps), isolated and periodic, with
// differences and force kernels; a 2-rank run stopped half-way and resumed on 3 ranks too.
TEST_F(PmCli, MpiRanksAgreeWithOneProcessToRoundOff) {
  if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun (Open MPI)";
  auto mpirun = [&](int ranks, const std::string& keys) {
    const std::string command =
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np " +
        std::to_string(ranks) + " " + SWARMFIT_BINARY + " " + keys + " > " + (dir_ / "mpi.log").string() + " 2>&1";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  auto by_id = [&](const std::string& file) {
    swarmfit::h5::Handle f(H5Fopen((dir_ / file).c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), file);
    const std::vector<long> id = swarmfit::h5::read_longs(f, "id");
    const std::vector<int> status = swarmfit::h5::read_ints(f, "status");
    const std::vector<double> all = positions(file);
    std::vector<double> sorted(all.size());
    const std::size_t n = id.size();
    for (std::size_t i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) {
        sorted[3 * id[i] + c] = all[3 * i + c];
        sorted[3 * (n + id[i]) + c] = all[3 * (n + i) + c];
      }
    int off = 0;
    for (int s : status) off += s;
    return std::make_pair(sorted, off);
  };
  const std::string head = "pm n=3000 mesh=32 dt=0.02 snapshot_interval=0.2 threads=1 -q ", base = head + "t_end=0.4 ";
  int case_number = 0;
  for (const std::string variant : {"box=16", "box=8 boundary=periodic assignment=cic difference_order=2",
                                    "box=16 difference_order=0 assignment=ngp"}) {
    SCOPED_TRACE(variant);
    const std::string tag = std::to_string(++case_number);
    ASSERT_EQ(run(base + variant + out("one" + tag)).exit_code, 0);
    const auto one = by_id("one" + tag + "/state.h5");
    for (int ranks : {2, 3}) {
      const std::string folder = "r" + std::to_string(ranks) + "_" + tag;
      ASSERT_EQ(mpirun(ranks, base + variant + out(folder)), 0) << ranks << " ranks";
      const auto many = by_id(folder + "/state.h5");
      ASSERT_EQ(many.first.size(), one.first.size());
      double worst = 0;
      for (std::size_t k = 0; k < one.first.size(); ++k)
        worst = std::max(worst, std::fabs(one.first[k] - many.first[k]) / (1 + std::fabs(one.first[k])));
      EXPECT_LT(worst, 1e-13) << ranks << " ranks";
      EXPECT_EQ(many.second, one.second) << "particles off the mesh";
    }
  }
  // Stopped at t = 0.2 on 2 ranks, resumed to 0.4 on 3.
  const std::string variant = "box=16";
  ASSERT_EQ(mpirun(2, head + "t_end=0.2 " + variant + out("half")), 0);
  ASSERT_EQ(mpirun(3, base + variant + " --resume" + out("half")), 0);
  const auto one = by_id("one1/state.h5"), resumed = by_id("half/state.h5");
  for (std::size_t k = 0; k < one.first.size(); ++k)
    ASSERT_NEAR(one.first[k], resumed.first[k], 1e-13 * (1 + std::fabs(one.first[k]))) << k;
  // Refused under mpirun before any work: the multigrid solver and the GPU run in one process.
  EXPECT_EQ(mpirun(2, base + "boundary=periodic solver=multigrid" + out("mg")), 2);
  EXPECT_EQ(mpirun(2, base + "backend=cuda" + out("gpu")), 2);
  EXPECT_FALSE(fs::exists(dir_ / "mg"));
  EXPECT_FALSE(fs::exists(dir_ / "gpu"));
}

TEST_F(PmCli, BadInputIsOneLineAndNothingWritten) {
  expect_refused(run("pm mesh=30" + out("x")), "'mesh'");
  expect_refused(run("pm solver=multigrid" + out("x")), "'solver'");
  expect_refused(run("pm t_end=1 dt=0.03" + out("x")), "'t_end'");
  expect_refused(run("pm assignment=pcs" + out("x")), "'assignment'");
  expect_refused(run("pm precision=half" + out("x")), "'precision'");
  expect_refused(run("pm --resume" + out("x")), "state.h5");
  const std::string csv = write("ic.csv", "1,0,0,0,0,0,0\n1,1,0,0,0\n");
  expect_refused(run("pm ic=file ic_file=" + csv + out("x")), "ic.csv:2");
}

// The collision of two Plummer spheres, periodic multigrid on the way; `swarmfit plot` draws the
// energy, the momentum and a frame of the surface density a snapshot.
TEST_F(PmCli, PlotDrawsFramesOfACollision) {
  ASSERT_EQ(
      run("pm ic=collision n=4000 separation=6 mesh=32 box=16 dt=0.1 t_end=0.4 snapshot_interval=0.2 -q" + out("c"))
          .exit_code,
      0);
  const Result r = run("plot " + (dir_ / "c").string() + " --output " + (dir_ / "p").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"energy.png", "frames/frame_000000.png", "frames/frame_000002.png"}) {
    EXPECT_TRUE(fs::exists(dir_ / "p" / f)) << f;
    EXPECT_GT(fs::file_size(dir_ / "p" / f), 5000u) << f;
  }
  const std::string examples = std::string(SWARMFIT_SOURCE_DIR) + "/examples/pm/";
  for (const char* example : {"plummer.cfg", "collision.cfg"}) {
    const Result e = run("pm --config " + examples + example + " n=2000 mesh=16 t_end=0.2 snapshot_interval=0.2 -q" +
                         out(std::string("e_") + example));
    EXPECT_EQ(e.exit_code, 0) << example << ": " << e.err;
  }
  const Result mg =
      run("pm n=2000 mesh=16 box=4 boundary=periodic solver=multigrid dt=0.05 t_end=0.1 "
          "snapshot_interval=0.1 -q" +
          out("m"));
  ASSERT_EQ(mg.exit_code, 0) << mg.err;
  EXPECT_NE(mg.out.find("periodic, multigrid"), std::string::npos) << mg.out;
}

}  // namespace
