#include "swarmfit/observations/dataset.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "swarmfit/observations/input_error.hpp"

namespace swarmfit {

namespace {

const std::vector<std::pair<std::string, std::string>> kCommonKeys = {
    {"file", "data file; a relative path is relative to the configuration file's folder"},
    {"format", "whitespace (default), csv, tab or semicolon"},
    {"comment", "line markers of comment lines, separated by blanks (default #)"},
    {"skip_lines", "physical lines skipped at the top of the file (titles, preambles)"},
    {"footer_lines", "non-blank lines dropped at the end of the file (table notes)"},
    {"header", "yes: the first row after the skipped lines and comments is a header"},
    {"columns", "the role of each column in order, separated by blanks; - ignores a column"},
    {"time_offset", "added to every time to give BJD_TDB (2450000, 2454833, 2454900, 2457000, ...)"},
};
const std::vector<std::pair<std::string, std::string>> kRvKeys = {
    {"rv_unit", "m/s (default) or km/s, for rv and rv_error"},
    {"instrument", "instrument name for the whole file (default: the section name)"},
    {"instrument_names", "instrument column value -> name, e.g. '0:HIRES 1:SOPHIE'"},
};
const std::vector<std::pair<std::string, std::string>> kTransitKeys = {
    {"planet", "planet name for the whole file (b, c, ...)"},
    {"planet_names", "planet column value -> name, e.g. '1:b 2:c'"},
    {"allow_duplicates", "yes: a (planet, epoch) pair may appear more than once (two facilities)"},
    {"period", "days; for files without an epoch column, epochs are counted with this period"},
    {"oc_unit", "days (default), minutes or seconds, for oc and oc_error"},
};
const std::set<std::string> kRvRoles = {"time", "rv", "rv_error", "instrument", "-"};
const std::set<std::string> kTransitRoles = {"planet",      "epoch",          "time", "error",    "error_lower",
                                             "error_upper", "ephemeris_time", "oc",   "oc_error", "-"};

std::vector<std::string> split_blanks(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  std::string word;
  while (in >> word) words.push_back(word);
  return words;
}

bool parse_bool(const ConfigEntry& e) {
  if (e.value == "yes" || e.value == "true" || e.value == "1") return true;
  if (e.value == "no" || e.value == "false" || e.value == "0") return false;
  throw InputError(e.origin + ": key '" + e.key + "': expected yes or no, got '" + e.value + "'");
}

int parse_count(const ConfigEntry& e) {
  const double v = parse_config_number(e);
  if (v < 0 || v != std::floor(v) || v > 1e6)
    throw InputError(e.origin + ": key '" + e.key + "': expected a whole number >= 0, got '" + e.value + "'");
  return static_cast<int>(v);
}

std::map<std::string, std::string> parse_names(const ConfigEntry& e) {
  std::map<std::string, std::string> names;
  for (const std::string& item : split_blanks(e.value)) {
    const auto colon = item.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size())
      throw InputError(e.origin + ": key '" + e.key + "': expected value:name pairs, got '" + item + "'");
    names[item.substr(0, colon)] = item.substr(colon + 1);
  }
  if (names.empty()) throw InputError(e.origin + ": key '" + e.key + "' has no value:name pairs");
  return names;
}

std::string join_keys(const std::map<std::string, std::string>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : ", ") + k;
  return s;
}

int find_or_add(std::vector<std::string>& names, const std::string& name) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i);
  names.push_back(name);
  return static_cast<int>(names.size()) - 1;
}

}  // namespace

double parse_config_number(const ConfigEntry& e) {
  char* end = nullptr;
  const double v = std::strtod(e.value.c_str(), &end);
  if (e.value.empty() || *end != '\0' || !std::isfinite(v))
    throw InputError(e.origin + ": key '" + e.key + "': expected a number, got '" + e.value + "'");
  return v;
}

const std::vector<std::pair<std::string, std::string>>& source_keys(SourceKind kind) {
  static const auto rv = [] {
    auto keys = kCommonKeys;
    keys.insert(keys.end(), kRvKeys.begin(), kRvKeys.end());
    return keys;
  }();
  static const auto transits = [] {
    auto keys = kCommonKeys;
    keys.insert(keys.end(), kTransitKeys.begin(), kTransitKeys.end());
    return keys;
  }();
  return kind == SourceKind::kRv ? rv : transits;
}

SourceSpec parse_source_spec(SourceKind kind, const std::string& name, const std::string& origin,
                             const std::vector<ConfigEntry>& entries, const std::string& base_dir) {
  SourceSpec s;
  s.kind = kind;
  s.name = name;
  s.origin = origin;
  const char* section = kind == SourceKind::kRv ? "rv" : "transits";
  const std::set<std::string>& roles = kind == SourceKind::kRv ? kRvRoles : kTransitRoles;
  std::string columns_origin = origin;
  for (const ConfigEntry& e : entries) {
    bool known = false;
    for (const auto& [key, meaning] : source_keys(kind)) known = known || key == e.key;
    if (!known) throw InputError(e.origin + ": unknown key '" + e.key + "' in a [" + section + "] section");
    if (e.value.empty()) throw InputError(e.origin + ": key '" + e.key + "' has no value");
    if (e.key == "file") {
      s.file = (e.value[0] == '/' || base_dir.empty()) ? e.value : base_dir + "/" + e.value;
    } else if (e.key == "format") {
      if (e.value == "whitespace") {
        s.format.whitespace = true;
      } else if (e.value == "csv" || e.value == "tab" || e.value == "semicolon") {
        s.format.whitespace = false;
        s.format.delimiter = e.value == "csv" ? ',' : e.value == "tab" ? '\t' : ';';
      } else {
        throw InputError(e.origin + ": key 'format': expected whitespace, csv, tab or semicolon, got '" + e.value +
                         "'");
      }
    } else if (e.key == "comment") {
      s.format.comments = split_blanks(e.value);
    } else if (e.key == "skip_lines") {
      s.format.skip_lines = parse_count(e);
    } else if (e.key == "footer_lines") {
      s.format.footer_lines = parse_count(e);
    } else if (e.key == "header") {
      s.format.header = parse_bool(e);
    } else if (e.key == "columns") {
      s.columns = split_blanks(e.value);
      columns_origin = e.origin;
      for (const std::string& c : s.columns)
        if (!roles.count(c)) {
          std::string list;
          for (const auto& r : roles) list += (list.empty() ? "" : ", ") + r;
          throw InputError(e.origin + ": key 'columns': unknown column '" + c + "' (known: " + list + ")");
        }
    } else if (e.key == "time_offset") {
      s.time_offset = parse_config_number(e);
    } else if (e.key == "rv_unit") {
      if (e.value == "m/s") {
        s.rv_scale = 1.0;
      } else if (e.value == "km/s") {
        s.rv_scale = 1000.0;
      } else {
        throw InputError(e.origin + ": key 'rv_unit': expected m/s or km/s, got '" + e.value + "'");
      }
    } else if (e.key == "oc_unit") {
      if (e.value == "days") {
        s.oc_scale = 1.0;
      } else if (e.value == "minutes") {
        s.oc_scale = 1.0 / 1440.0;
      } else if (e.value == "seconds") {
        s.oc_scale = 1.0 / 86400.0;
      } else {
        throw InputError(e.origin + ": key 'oc_unit': expected days, minutes or seconds, got '" + e.value + "'");
      }
    } else if (e.key == "instrument") {
      s.instrument = e.value;
    } else if (e.key == "instrument_names") {
      s.instrument_names = parse_names(e);
    } else if (e.key == "planet") {
      s.planet = e.value;
    } else if (e.key == "planet_names") {
      s.planet_names = parse_names(e);
    } else if (e.key == "allow_duplicates") {
      s.allow_duplicates = parse_bool(e);
    } else if (e.key == "period") {
      s.period = parse_config_number(e);
      if (s.period <= 0) throw InputError(e.origin + ": key 'period' must be > 0");
    }
  }
  auto has = [&](const char* role) { return std::count(s.columns.begin(), s.columns.end(), role) > 0; };
  auto require = [&](bool ok, const std::string& what) {
    if (!ok) throw InputError(columns_origin + ": [" + std::string(section) + " " + name + "]: " + what);
  };
  require(!s.file.empty(), "missing key 'file'");
  require(!s.columns.empty(), "missing key 'columns'");
  for (const std::string& c : s.columns)
    require(c == "-" || std::count(s.columns.begin(), s.columns.end(), c) == 1, "column '" + c + "' named twice");
  if (kind == SourceKind::kRv) {
    require(has("time") && has("rv") && has("rv_error"), "columns must name time, rv and rv_error");
    require(!(has("instrument") && !s.instrument.empty()), "give an instrument column or 'instrument', not both");
    require(has("instrument") || s.instrument_names.empty(), "'instrument_names' needs an instrument column");
    if (!has("instrument") && s.instrument.empty()) s.instrument = name;
  } else {
    require(has("time") || (has("ephemeris_time") && has("oc")), "columns must name time, or ephemeris_time and oc");
    require(has("error") || has("oc_error") || (has("error_lower") && has("error_upper")),
            "columns must name error, oc_error, or error_lower and error_upper");
    require(has("planet") != !s.planet.empty(), "give a planet column or 'planet' (exactly one)");
    require(has("planet") || s.planet_names.empty(), "'planet_names' needs a planet column");
    require(has("epoch") || s.period > 0, "without an epoch column, give 'period' to count epochs");
  }
  return s;
}

void Dataset::add(const SourceSpec& spec) {
  const std::vector<TableRow> rows = read_table(spec.file, spec.format);
  if (rows.empty()) throw InputError(spec.file + ": no data rows (section at " + spec.origin + ")");
  std::map<std::string, int> column;
  for (std::size_t k = 0; k < spec.columns.size(); ++k)
    if (spec.columns[k] != "-") column[spec.columns[k]] = static_cast<int>(k);
  const std::string& path = spec.file;
  auto where = [&](const TableRow& row) { return path + ":" + std::to_string(row.line); };
  auto number = [&](const TableRow& row, const char* role) {
    return parse_number(row.fields[column.at(role)], path, row.line, role);
  };
  auto positive = [&](const TableRow& row, const char* role, double value) {
    if (!(value > 0.0))
      throw InputError(where(row) + ": column '" + role + "': an error must be > 0, got " +
                       row.fields[column.at(role)]);
  };
  // Every row as wide as the first (columns past those named are ignored, alike in every row): a
  // row with a field more or less is a damaged line, not data.
  for (const TableRow& row : rows)
    if (row.fields.size() < spec.columns.size() || row.fields.size() != rows.front().fields.size())
      throw InputError(
          where(row) + ": expected " + std::to_string(std::max(spec.columns.size(), rows.front().fields.size())) +
          " columns (as line " + std::to_string(rows.front().line) + "), found " + std::to_string(row.fields.size()));

  if (spec.kind == SourceKind::kRv) {
    for (const TableRow& row : rows) {
      RvObservation o;
      o.time = number(row, "time") + spec.time_offset;
      o.rv = number(row, "rv") * spec.rv_scale;
      o.error = number(row, "rv_error");
      positive(row, "rv_error", o.error);
      o.error *= spec.rv_scale;
      std::string name = spec.instrument;
      if (column.count("instrument")) {
        const std::string& value = row.fields[column.at("instrument")];
        if (!spec.instrument_names.empty()) {
          auto it = spec.instrument_names.find(value);
          if (it == spec.instrument_names.end())
            throw InputError(where(row) + ": column 'instrument': unknown instrument '" + value +
                             "' (instrument_names lists " + join_keys(spec.instrument_names) + ")");
          name = it->second;
        } else {
          name = value;
        }
      }
      o.instrument = find_or_add(instruments, name);
      o.origin = where(row);
      rv.push_back(o);
    }
    sources_.push_back(spec);
    return;
  }

  // Transit times.
  std::vector<std::string> declared;  // planets this source promises
  if (!spec.planet.empty()) declared.push_back(spec.planet);
  for (const auto& [value, name] : spec.planet_names) declared.push_back(name);
  std::vector<TransitObservation> added;
  for (const TableRow& row : rows) {
    TransitObservation o;
    std::string name = spec.planet;
    if (column.count("planet")) {
      const std::string& value = row.fields[column.at("planet")];
      if (!spec.planet_names.empty()) {
        auto it = spec.planet_names.find(value);
        if (it == spec.planet_names.end())
          throw InputError(where(row) + ": column 'planet': unknown planet '" + value + "' (planet_names lists " +
                           join_keys(spec.planet_names) + ")");
        name = it->second;
      } else {
        name = value;
      }
    }
    o.planet = find_or_add(planets, name);
    if (column.count("time")) {
      o.time = number(row, "time") + spec.time_offset;
    } else {
      o.time = number(row, "ephemeris_time") + spec.time_offset + number(row, "oc") * spec.oc_scale;
    }
    if (column.count("error")) {
      o.error = number(row, "error");
      positive(row, "error", o.error);
    } else if (column.count("oc_error")) {
      o.error = number(row, "oc_error");
      positive(row, "oc_error", o.error);
      o.error *= spec.oc_scale;
    } else {
      const double lower = number(row, "error_lower"), upper = number(row, "error_upper");
      positive(row, "error_lower", lower);
      positive(row, "error_upper", upper);
      o.error = 0.5 * (lower + upper);  // symmetrised: the likelihood is Gaussian or Student-t
    }
    o.epoch = 0;
    if (column.count("epoch")) {
      const double e = number(row, "epoch");
      if (e != std::floor(e) || std::fabs(e) > 1e9)
        throw InputError(where(row) + ": column 'epoch': not a whole number: '" + row.fields[column.at("epoch")] + "'");
      o.epoch = static_cast<long>(e);
    }
    o.origin = where(row);
    added.push_back(o);
  }
  if (!column.count("epoch")) {
    std::map<int, double> first;
    for (const auto& o : added) first[o.planet] = first.count(o.planet) ? std::min(first[o.planet], o.time) : o.time;
    for (auto& o : added) o.epoch = std::lround((o.time - first[o.planet]) / spec.period);
  }
  for (const std::string& name : declared) {
    const int p = find_or_add(planets, name);
    bool any = false;
    for (const auto& o : added) any = any || o.planet == p;
    for (const auto& o : transits) any = any || o.planet == p;
    if (!any)
      throw InputError(spec.file + ": planet '" + name + "' has no transit times (section at " + spec.origin + ")");
  }
  std::set<std::pair<int, long>> seen;
  for (const auto& o : transits) seen.insert({o.planet, o.epoch});
  for (const auto& o : added) {
    if (!seen.insert({o.planet, o.epoch}).second && !spec.allow_duplicates)
      throw InputError(o.origin + ": planet '" + planets[o.planet] + "' epoch " + std::to_string(o.epoch) +
                       " appears twice (set allow_duplicates = yes if both measurements are wanted)");
  }
  transits.insert(transits.end(), added.begin(), added.end());
  sources_.push_back(spec);
}

void Dataset::finish() {
  if (rv.empty() && transits.empty()) throw InputError("no data: give at least one [rv] or [transits] section");
  auto by_time = [](const RvObservation& a, const RvObservation& b) { return a.time < b.time; };
  if (!std::is_sorted(rv.begin(), rv.end(), by_time)) {
    std::stable_sort(rv.begin(), rv.end(), by_time);
    notes.push_back("RV times were not in order; sorted them (" + std::to_string(rv.size()) + " points)");
  }
  auto by_epoch = [](const TransitObservation& a, const TransitObservation& b) {
    if (a.planet != b.planet) return a.planet < b.planet;
    if (a.epoch != b.epoch) return a.epoch < b.epoch;
    return a.time < b.time;
  };
  if (!std::is_sorted(transits.begin(), transits.end(), by_epoch)) {
    std::stable_sort(transits.begin(), transits.end(), by_epoch);
    notes.push_back("transit times sorted by planet and epoch");
  }
  // Transit times must increase with epoch: a decrease is a numbering error in the file.
  for (std::size_t k = 1; k < transits.size(); ++k) {
    const auto& a = transits[k - 1];
    const auto& b = transits[k];
    if (a.planet == b.planet && a.epoch < b.epoch && !(b.time > a.time))
      throw InputError(b.origin + ": planet '" + planets[b.planet] + "' epoch " + std::to_string(b.epoch) +
                       " is not later than epoch " + std::to_string(a.epoch) + " (" + a.origin + ")");
  }
}

int Dataset::instrument_index(const std::string& name) const {
  for (std::size_t i = 0; i < instruments.size(); ++i)
    if (instruments[i] == name) return static_cast<int>(i);
  return -1;
}
int Dataset::planet_index(const std::string& name) const {
  for (std::size_t i = 0; i < planets.size(); ++i)
    if (planets[i] == name) return static_cast<int>(i);
  return -1;
}
double Dataset::first_time() const {
  double t = 1e300;
  for (const auto& o : rv) t = std::min(t, o.time);
  for (const auto& o : transits) t = std::min(t, o.time);
  return t;
}
double Dataset::last_time() const {
  double t = -1e300;
  for (const auto& o : rv) t = std::max(t, o.time);
  for (const auto& o : transits) t = std::max(t, o.time);
  return t;
}

LinearEphemeris fit_linear_ephemeris(const Dataset& data, int planet) {
  // Weighted least squares for t = t0 + P E, centred on the weighted mean epoch for conditioning.
  double sw = 0, se = 0, st = 0;
  for (const auto& o : data.transits)
    if (o.planet == planet) {
      const double w = 1.0 / (o.error * o.error);
      sw += w;
      se += w * o.epoch;
      st += w * o.time;
    }
  if (sw == 0) throw InputError("planet '" + data.planets.at(planet) + "' has no transit times");
  const double emean = se / sw, tmean = st / sw;
  double see = 0, set = 0;
  for (const auto& o : data.transits)
    if (o.planet == planet) {
      const double w = 1.0 / (o.error * o.error);
      see += w * (o.epoch - emean) * (o.epoch - emean);
      set += w * (o.epoch - emean) * (o.time - tmean);
    }
  if (!(see > 0))
    throw InputError("planet '" + data.planets.at(planet) + "': transit times of two different epochs are needed");
  LinearEphemeris e;
  e.period = set / see;
  e.t0 = tmean - e.period * emean;
  return e;
}

}  // namespace swarmfit
