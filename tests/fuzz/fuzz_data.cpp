// libFuzzer target: the RV and transit-time readers with every format option (issue 37, "hostile
// input"). The first kOptionBytes bytes of the input choose an [rv NAME] or [transits NAME]
// section: format, comment markers, skip_lines, footer_lines, header, columns (count and role of
// each), time_offset, rv_unit, oc_unit, instrument(_names), planet(_names), allow_duplicates,
// period, one more key of source_keys() with an odd value, and how `file` is given; the rest of
// the input is the data file. The section is read as `swarmfit data` reads it (read_config_data:
// every row checked, the dataset finished), then each planet's linear ephemeris is fitted (as
// `swarmfit data` and the likelihood do). Each step must return or throw InputError.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "swarmfit/observations/config_file.hpp"
#include "swarmfit/observations/dataset.hpp"

namespace {

constexpr std::size_t kOptionBytes = 16;

// Values given to the options, "" meaning "the key is left out"; chosen by a few bits each.
const char* const kFormats[] = {"", "whitespace", "csv", "tab", "semicolon", "pipe", "csv", "whitespace"};
const char* const kComments[] = {"", "#", "% #", "//"};
const char* const kSkipLines[] = {"", "0", "1", "3"};
const char* const kFooterLines[] = {"", "0", "2", "-1"};
const char* const kTimeOffsets[] = {"",         "0",     "2450000", "2454833",  "2454900", "2457000",
                                    "-2450000", "1e308", "-1e308",  "nan",      "inf",     "1e20",
                                    "abc",      "0x10",  "0.5",     "2400000.5"};
const char* const kRvUnits[] = {"", "m/s", "km/s", "cm/s"};
const char* const kOcUnits[] = {"", "days", "minutes", "seconds"};
const char* const kPeriods[] = {"",     "1.5", "9.8", "0",    "-1",    "1e-300", "1e300",  "nan",
                                "1e-9", "1e5", "x",   "19.9", "0.001", "3",      "2.5e10", "7"};
const char* const kInstruments[] = {"", "A", "B C", "HIRES"};
const char* const kInstrumentNames[] = {"", "0:A 1:B", "1:x 1:y", "broken"};
const char* const kPlanets[] = {"", "b", "c", "b c"};
const char* const kPlanetNames[] = {"", "1:b 2:c", "0:b", "x"};
const char* const kFiles[] = {"data.txt", "missing.txt", ".", "data.txt"};
const char* const kOddValues[] = {"",         "yes", "no",      "0",     "-1",
                                  "1e400",    "nan", "2454833", "m/s",   "csv",
                                  "data.txt", "1:b", "b",       "x y z", "9223372036854775807",
                                  "-"};
const std::vector<std::string> kRvRoles = {"time", "rv", "rv_error", "instrument", "-"};
const std::vector<std::string> kTransitRoles = {"planet",      "epoch",          "time", "error",    "error_lower",
                                                "error_upper", "ephemeris_time", "oc",   "oc_error", "-"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swarmfit;
  uint8_t b[kOptionBytes] = {};
  for (std::size_t i = 0; i < kOptionBytes && i < size; ++i) b[i] = data[i];
  const std::size_t body = size < kOptionBytes ? size : kOptionBytes;
  fuzz::write_file("data.txt", data + body, size - body);

  const bool transits = b[0] & 1;
  const SourceKind kind = transits ? SourceKind::kTransits : SourceKind::kRv;
  std::string cfg = std::string("[") + (transits ? "transits" : "rv") + " S]\n";
  std::vector<std::string> given;
  auto key = [&](const std::string& k, const std::string& value) {
    if (value.empty()) return;
    cfg += k + " = " + value + "\n";
    given.push_back(k);
  };
  key("file", kFiles[(b[15] >> 4) & 3]);
  key("format", kFormats[(b[0] >> 1) & 7]);
  if (b[0] & 16) key("header", "yes");
  key("comment", kComments[(b[0] >> 6) & 3]);
  key("skip_lines", kSkipLines[b[1] & 3]);
  key("footer_lines", kFooterLines[(b[1] >> 2) & 3]);
  key("time_offset", kTimeOffsets[b[1] >> 4]);
  const std::vector<std::string>& roles = transits ? kTransitRoles : kRvRoles;
  if (const int count = b[4] % 9; count > 0) {
    std::string columns;
    for (int c = 0; c < count; ++c) columns += (c ? " " : "") + roles[b[5 + c] % roles.size()];
    key("columns", columns);
  }
  if (transits) {
    if (b[0] & 32) key("allow_duplicates", "yes");
    key("oc_unit", kOcUnits[(b[2] >> 2) & 3]);
    key("period", kPeriods[b[2] >> 4]);
    key("planet", kPlanets[(b[3] >> 4) & 3]);
    key("planet_names", kPlanetNames[b[3] >> 6]);
  } else {
    key("rv_unit", kRvUnits[b[2] & 3]);
    key("instrument", kInstruments[b[3] & 3]);
    key("instrument_names", kInstrumentNames[(b[3] >> 2) & 3]);
  }
  // One more key of the section's list (new keys are covered as they are added), unless given.
  const auto& keys = source_keys(kind);
  if (const std::size_t k = b[13] % (keys.size() + 1); k < keys.size()) {
    bool repeated = false;
    for (const auto& g : given) repeated = repeated || g == keys[k].first;
    if (!repeated) key(keys[k].first, kOddValues[b[14] & 15]);
  }
  const std::string path = fuzz::write_file("fuzz.cfg", cfg);

  Dataset dataset;
  bool read = false;
  fuzz::expect_input_error("fuzz_data/read", [&] {
    dataset = read_config_data(path);
    read = true;
  });
  if (read)
    for (std::size_t p = 0; p < dataset.planets.size(); ++p)
      fuzz::expect_input_error("fuzz_data/ephemeris", [&] { fit_linear_ephemeris(dataset, static_cast<int>(p)); });
  return 0;
}
