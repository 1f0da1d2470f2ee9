// Every dataset of ../shared/data/README.md is read by its documented configuration in
// examples/data/ (counts per instrument and planet as the README lists them), and malformed
// variants of each are refused with one line naming the file, line and column. Skipped with a
// message when ../shared/data is absent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "swarmfit/observations/config_file.hpp"
#include "swarmfit/observations/input_error.hpp"

namespace swarmfit {
namespace {

namespace fs = std::filesystem;

std::string source_path(const std::string& relative) { return std::string(SWARMFIT_SOURCE_DIR) + "/" + relative; }
bool shared_data_present() { return fs::exists(source_path("../shared/data/README.md")); }

struct Expected {
  const char* config;
  std::map<std::string, int> rv;        // instrument -> points
  std::map<std::string, int> transits;  // planet -> transit times
};

const std::vector<Expected>& expectations() {
  static const std::vector<Expected> all = {
      {"gj876", {{"LICK", 16}, {"KECK", 155}}, {}},
      {"eta_ceti", {{"LICK", 118}, {"CRIRES", 9}}, {}},
      {"nu_oph", {{"LICK", 150}, {"OAO", 44}, {"CRIRES", 10}}, {}},
      {"hd45364", {{"HARPS", 58}}, {}},
      {"hd82943", {{"KECK", 23}, {"HIRES", 156}, {"HARPS-pre", 208}, {"HARPS-post", 47}}, {}},
      {"hd202206", {{"CORALIE", 95}}, {}},
      {"hd160691", {{"AAT", 108}, {"HARPS", 86}, {"CORALIE", 40}}, {}},
      {"55cnc", {{"LICK", 250}, {"KECK", 70}, {"ELODIE", 48}, {"HET", 119}}, {}},
      {"hd164922", {{"HIRES-pre2004", 52}, {"HIRES-post2004", 276}, {"APF", 73}}, {}},
      {"hd164922_keck", {{"KECK", 64}}, {}},
      {"51peg", {{"LICK", 256}, {"ELODIE", 153}}, {}},
      {"kepler9", {{"HARPS-N", 30}}, {{"b", 70}, {"c", 37}}},
      {"kepler9_holman2010", {}, {{"b", 9}, {"c", 6}}},
      {"kepler88", {{"HIRES", 40}, {"SOPHIE", 11}}, {{"b", 121}}},
      {"toi1130", {{"HARPS", 49}, {"PFS", 20}, {"Huang2020", 21}}, {{"b", 6}, {"c", 10}}},
      {"trappist1", {}, {{"b", 161}, {"c", 107}, {"d", 53}, {"e", 49}, {"f", 33}, {"g", 30}, {"h", 14}}},
      {"kepler51", {}, {{"b", 31}, {"c", 11}, {"d", 11}}},
      {"kepler51_tables", {}, {{"b", 31}, {"c", 11}, {"d", 11}}},
      {"kepler51_jwst", {}, {{"b", 36}, {"c", 17}, {"d", 17}}},
      {"toi216", {}, {{"b", 11}, {"c", 8}}},
      {"k2_24", {}, {{"b", 6}, {"c", 4}}},
  };
  return all;
}

// gtest prints parameters in messages (skips included): the config's name, not the bytes.
void PrintTo(const Expected& e, std::ostream* os) { *os << e.config; }

std::string config_path(const char* name) { return source_path(std::string("examples/data/") + name + ".cfg"); }

TEST(Datasets, EveryDatasetHasAConfig) {
  // A dataset folder without a config in examples/data would go untested.
  if (!shared_data_present()) GTEST_SKIP() << "../shared/data is absent";
  std::string all;
  for (const auto& e : expectations()) all += std::string(e.config) + " ";
  std::ifstream configs;
  for (const auto& entry : fs::directory_iterator(source_path("../shared/data"))) {
    if (!entry.is_directory()) continue;
    bool referenced = false;
    for (const auto& e : expectations()) {
      std::ifstream in(config_path(e.config));
      std::stringstream text;
      text << in.rdbuf();
      referenced = referenced || text.str().find("/" + entry.path().filename().string() + "/") != std::string::npos;
    }
    EXPECT_TRUE(referenced) << entry.path().filename() << " is read by no config in examples/data";
  }
}

class DatasetConfig : public ::testing::TestWithParam<Expected> {};

TEST_P(DatasetConfig, ReadsWithTheDocumentedCounts) {
  if (!shared_data_present()) GTEST_SKIP() << "../shared/data is absent";
  const Expected& e = GetParam();
  const Dataset data = read_config_data(config_path(e.config));
  std::map<std::string, int> rv, transits;
  for (const auto& o : data.rv) ++rv[data.instruments[o.instrument]];
  for (const auto& o : data.transits) ++transits[data.planets[o.planet]];
  EXPECT_EQ(rv, e.rv);
  EXPECT_EQ(transits, e.transits);
  // Converted to BJD_TDB days, m/s and positive errors; RVs sorted by time.
  for (std::size_t k = 0; k < data.rv.size(); ++k) {
    const auto& o = data.rv[k];
    EXPECT_GT(o.time, 2.44e6) << o.origin;
    EXPECT_LT(o.time, 2.47e6) << o.origin;
    EXPECT_GT(o.error, 0.0) << o.origin;
    EXPECT_LT(std::fabs(o.rv), 1e5) << o.origin;
    if (k > 0) EXPECT_GE(o.time, data.rv[k - 1].time);
  }
  for (const auto& o : data.transits) {
    EXPECT_GT(o.time, 2.45e6) << o.origin;
    EXPECT_LT(o.time, 2.47e6) << o.origin;
    EXPECT_GT(o.error, 0.0) << o.origin;
    EXPECT_LT(o.error, 0.1) << o.origin;
  }
  // A linear ephemeris through each planet's times leaves residuals far below a period: the
  // epochs are numbered consistently.
  for (std::size_t p = 0; p < data.planets.size(); ++p) {
    const LinearEphemeris eph = fit_linear_ephemeris(data, static_cast<int>(p));
    for (const auto& o : data.transits)
      if (o.planet == static_cast<int>(p))
        EXPECT_LT(std::fabs(o.time - eph.t0 - eph.period * o.epoch), 0.1 * eph.period) << o.origin;
  }
}

INSTANTIATE_TEST_SUITE_P(SharedData, DatasetConfig, ::testing::ValuesIn(expectations()),
                         [](const ::testing::TestParamInfo<Expected>& info) { return std::string(info.param.config); });

// --- malformed variants: the first source of each config, copied and broken one way at a time.

struct Source {
  std::string file;      // resolved path
  std::string key_line;  // the 'file = ...' line of the config
  bool csv = false;
  std::vector<std::string> columns;
};

Source first_source(const std::string& config_text, const std::string& config_dir) {
  Source s;
  std::istringstream in(config_text);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("[rv ", 0) == 0 || line.rfind("[transits ", 0) == 0) {
      if (inside) break;
      inside = true;
      continue;
    }
    if (!inside) continue;
    std::smatch m;
    if (std::regex_match(line, m, std::regex(R"(file = (.*))"))) {
      s.key_line = line;
      s.file = config_dir + "/" + m[1].str();
    } else if (std::regex_match(line, m, std::regex(R"(columns = (.*))"))) {
      std::istringstream words(m[1].str());
      std::string w;
      while (words >> w) s.columns.push_back(w);
    } else if (line == "format = csv") {
      s.csv = true;
    }
  }
  return s;
}

struct Broken {
  std::string config;
  std::string file;
};

// Writes a copy of the config whose first source points at a copy of its file in which the row on
// physical line `row_line` (1-based) is replaced by `mutate(fields)`.
class Breaker {
 public:
  Breaker(const std::string& name, const std::string& dir) : name_(name), dir_(dir) {
    std::ifstream in(config_path(name.c_str()));
    std::stringstream text;
    text << in.rdbuf();
    config_text_ = text.str();
    source_ = first_source(config_text_, source_path("examples/data"));
    std::ifstream data(source_.file);
    std::string line;
    while (std::getline(data, line)) lines_.push_back(line);
  }
  const Source& source() const { return source_; }
  // Physical line (1-based) of the first data row: the first line the reader keeps.
  int first_row_line() const {
    const Dataset data = read_config_data(config_path(name_.c_str()));
    int best = 1 << 30;
    for (const auto& o : data.rv)
      if (o.origin.rfind(source_.file + ":", 0) == 0)
        best = std::min(best, std::stoi(o.origin.substr(source_.file.size() + 1)));
    for (const auto& o : data.transits)
      if (o.origin.rfind(source_.file + ":", 0) == 0)
        best = std::min(best, std::stoi(o.origin.substr(source_.file.size() + 1)));
    return best;
  }
  std::vector<std::string> fields(int line) const {
    std::vector<std::string> out;
    std::string f;
    std::istringstream in(lines_.at(line - 1));
    if (source_.csv) {
      while (std::getline(in, f, ',')) out.push_back(f);
    } else {
      while (in >> f) out.push_back(f);
    }
    return out;
  }
  Broken write(const std::string& tag, const std::vector<std::string>& new_lines) const {
    Broken b;
    b.file = dir_ + "/" + name_ + "_" + tag + ".dat";
    std::ofstream data(b.file);
    for (const auto& l : new_lines) data << l << "\n";
    b.config = dir_ + "/" + name_ + "_" + tag + ".cfg";
    std::string text = config_text_;
    text.replace(text.find(source_.key_line), source_.key_line.size(), "file = " + b.file);
    // Paths of the other sources stay valid relative to examples/data.
    text = std::regex_replace(text, std::regex(R"(file = \.\./)"), "file = " + source_path("examples/data") + "/../");
    std::ofstream(b.config) << text;
    return b;
  }
  Broken with_row(const std::string& tag, int line, const std::vector<std::string>& fields) const {
    std::vector<std::string> copy = lines_;
    std::string joined;
    for (std::size_t k = 0; k < fields.size(); ++k) joined += (k ? (source_.csv ? "," : " ") : "") + fields[k];
    copy.at(line - 1) = joined;
    return write(tag, copy);
  }
  Broken with_extra_row(const std::string& tag, int line) const {
    std::vector<std::string> copy = lines_;
    copy.insert(copy.begin() + line, lines_.at(line - 1));
    return write(tag, copy);
  }
  Broken empty() const { return write("empty", {}); }

 private:
  std::string name_, dir_, config_text_;
  Source source_;
  std::vector<std::string> lines_;
};

std::string error_of(const std::string& config) {
  try {
    read_config_data(config);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST_P(DatasetConfig, MalformedVariantsAreRefused) {
  if (!shared_data_present()) GTEST_SKIP() << "../shared/data is absent";
  const std::string dir = (fs::temp_directory_path() / ("swarmfit_malformed_" + std::to_string(::getpid()))).string();
  fs::create_directories(dir);
  const Breaker breaker(GetParam().config, dir);
  const Source& source = breaker.source();
  const int line = breaker.first_row_line();
  ASSERT_LT(line, 1 << 30);
  auto column = [&](const std::string& role) {
    for (std::size_t k = 0; k < source.columns.size(); ++k)
      if (source.columns[k] == role) return static_cast<int>(k);
    return -1;
  };
  auto expect_error = [&](const Broken& b, const std::string& needle) {
    const std::string message = error_of(b.config);
    EXPECT_NE(message.find(needle), std::string::npos) << "expected '" << needle << "' in: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
  };
  const int time_column = column("time") >= 0 ? column("time") : column("ephemeris_time");
  const int error_column = column("rv_error") >= 0   ? column("rv_error")
                           : column("error") >= 0    ? column("error")
                           : column("oc_error") >= 0 ? column("oc_error")
                                                     : column("error_lower");
  const std::string error_role = source.columns.at(error_column);
  const std::string time_role = source.columns.at(time_column);
  {
    auto f = breaker.fields(line);
    f.at(time_column) = "12x.5";
    const Broken b = breaker.with_row("nonnumeric", line, f);
    expect_error(b, b.file + ":" + std::to_string(line) + ": column '" + time_role + "': not a number");
  }
  {
    auto f = breaker.fields(line);
    f.at(time_column) = "nan";
    const Broken b = breaker.with_row("nan", line, f);
    expect_error(b, b.file + ":" + std::to_string(line) + ": column '" + time_role + "': not a finite number");
  }
  {
    auto f = breaker.fields(line);
    f.at(error_column) = "-0.5";
    const Broken b = breaker.with_row("negative_error", line, f);
    expect_error(b, b.file + ":" + std::to_string(line) + ": column '" + error_role + "': an error must be > 0");
  }
  {
    auto f = breaker.fields(line);
    f.at(error_column) = "0";
    const Broken b = breaker.with_row("zero_error", line, f);
    expect_error(b, b.file + ":" + std::to_string(line) + ": column '" + error_role + "': an error must be > 0");
  }
  {
    auto f = breaker.fields(line);
    f.resize(source.columns.size() - 1);
    const Broken b = breaker.with_row("short_row", line, f);
    expect_error(
        b, b.file + ":" + std::to_string(line) + ": expected " + std::to_string(source.columns.size()) + " columns");
  }
  expect_error(breaker.empty(), "no data rows");
  if (column("instrument") >= 0) {
    auto f = breaker.fields(line);
    f.at(column("instrument")) = "Z9";
    const Broken b = breaker.with_row("unknown_instrument", line, f);
    expect_error(b, b.file + ":" + std::to_string(line) + ": column 'instrument': unknown instrument 'Z9'");
  }
  if (column("planet") >= 0) {
    auto f = breaker.fields(line);
    f.at(column("planet")) = "9";
    const Broken b = breaker.with_row("unknown_planet", line, f);
    const std::string message = error_of(b.config);
    const bool named = message.find(": column 'planet': unknown planet '9'") != std::string::npos;
    // Without planet_names (K2-24) any label is a planet name; then its single transit is fine.
    if (std::string(GetParam().config) == "k2_24") {
      EXPECT_EQ(message, "");
    } else {
      EXPECT_TRUE(named) << message;
    }
  }
  if (column("epoch") >= 0) {
    // A repeated (planet, epoch) is refused unless the config allows it (TOI-216).
    const Broken b = breaker.with_extra_row("duplicate", line);
    const std::string message = error_of(b.config);
    if (std::string(GetParam().config) == "toi216") {
      EXPECT_EQ(message, "");
    } else {
      EXPECT_NE(message.find(b.file + ":" + std::to_string(line + 1) + ": planet"), std::string::npos) << message;
      EXPECT_NE(message.find("appears twice"), std::string::npos) << message;
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace swarmfit
