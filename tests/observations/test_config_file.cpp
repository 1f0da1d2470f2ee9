// The configuration reader: key = value files whose every error names the file and line, sectioned
// files with include = FILE, and the data of a configuration read without a model.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "swarmfit/observations/config_file.hpp"
#include "swarmfit/observations/input_error.hpp"

namespace swarmfit {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

class ConfigFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("swarmfit_config_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "sub");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  static std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(ConfigFile, FlatKeysNameFileLineAndKey) {
  po::options_description known;
  known.add_options()("time_step", po::value<double>()->default_value(1.0), "")("nsys", po::value<int>(), "");
  const std::string path = write("a.cfg", "# comment\ntime_step = 0.5 ; trailing\nnsys = 4\n");
  std::map<std::string, Setting> settings = read_config_file(path, known);
  EXPECT_EQ(settings.at("time_step").value, "0.5");
  EXPECT_EQ(settings.at("time_step").origin, path + ":2");
  apply_overrides(settings, {"nsys=8"}, known);
  po::variables_map vm;
  store_settings(settings, known, vm);
  EXPECT_EQ(vm["nsys"].as<int>(), 8);
  EXPECT_EQ(vm["time_step"].as<double>(), 0.5);
  EXPECT_EQ(error_of([&] { read_config_file(write("b.cfg", "time_stp = 1\n"), known); }),
            (dir_ / "b.cfg").string() + ":1: unknown key 'time_stp' (did you mean 'time_step'?)");
  EXPECT_EQ(error_of([&] { read_config_file(write("c.cfg", "nsys = 1\nnsys = 2\n"), known); }),
            (dir_ / "c.cfg").string() + ":2: key 'nsys' given twice (first at " + (dir_ / "c.cfg").string() + ":1)");
  std::map<std::string, Setting> bad = {{"nsys", Setting{"four", "x.cfg:3"}}};
  po::variables_map unused;
  EXPECT_EQ(error_of([&] { store_settings(bad, known, unused); }), "x.cfg:3: key 'nsys': invalid value 'four'");
}

TEST_F(ConfigFile, SectionsAndIncludes) {
  write("sub/planets.cfg", "inner = 1\n[planet c]\nperiod = 20\n");
  const std::string path =
      write("main.cfg", "star_mass = 1\n[planet b]\nperiod = 10\ninclude = sub/planets.cfg\nmass = 3\n[priors]\n");
  const SectionedConfig c = read_sectioned_config(path);
  ASSERT_EQ(c.globals.size(), 2u);  // the included file's global line is global
  EXPECT_EQ(c.globals[1].key, "inner");
  ASSERT_EQ(c.sections.size(), 3u);
  EXPECT_EQ(c.sections[0].name, "b");
  ASSERT_EQ(c.sections[0].entries.size(), 2u);  // after the include, lines belong to [planet b] again
  EXPECT_EQ(c.sections[0].entries[1].key, "mass");
  EXPECT_EQ(c.sections[1].type, "planet");
  EXPECT_EQ(c.sections[1].entries[0].origin, (dir_ / "sub/planets.cfg").string() + ":3");
  EXPECT_EQ(c.sections[2].type, "priors");
  EXPECT_NE(c.text.find("period = 20"), std::string::npos);
  EXPECT_EQ(error_of([&] { read_sectioned_config(write("d.cfg", "[planet]\n")); }),
            (dir_ / "d.cfg").string() + ":1: expected '[type name]' (e.g. [planet b]) or [priors], got '[planet]'");
}

// The data sections alone: the model's keys and sections are left alone, a repeated section is not.
TEST_F(ConfigFile, DataOfAConfigurationWithoutItsModel) {
  write("rv.txt", "2455000.5 3.0 1.5\n2455001.5 -2.0 1.5\n");
  write("tr.txt", "0 2455002.0 0.001\n1 2455012.0 0.001\n");
  const std::string data_sections =
      "[rv HARPS]\nfile = rv.txt\ncolumns = time rv rv_error\n"
      "[transits b]\nfile = tr.txt\nplanet = b\ncolumns = epoch time error\n";
  const std::string path = write("fit.cfg", "star_mass = 1\nanything = 2\n[planet b]\nperiod = 10\n" + data_sections);
  const Dataset data = read_config_data(path);
  EXPECT_EQ(data.rv.size(), 2u);
  EXPECT_EQ(data.instruments, std::vector<std::string>{"HARPS"});
  EXPECT_EQ(data.transits.size(), 2u);
  const std::string twice =
      write("twice.cfg", data_sections + "[rv HARPS]\nfile = rv.txt\ncolumns = time rv rv_error\n");
  EXPECT_EQ(error_of([&] { read_config_data(twice); }), twice + ":8: section [rv HARPS] appears twice");
}

}  // namespace
}  // namespace swarmfit
