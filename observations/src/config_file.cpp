#include "swarmfit/observations/config_file.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "swarmfit/observations/input_error.hpp"

namespace po = boost::program_options;

namespace swarmfit {

namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

void check_known(const std::string& key, const std::string& where, const po::options_description& known) {
  if (known.find_nothrow(key, false) != nullptr) return;
  std::string message = where + ": unknown key '" + key + "'";
  const std::string suggestion = closest_key(key, known);
  if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
  throw InputError(message);
}

// A folder or an unreadable file named in one line (text_table.hpp).
void open_config_file(std::ifstream& in, const std::string& path) {
  open_text_file(in, path, "a configuration file", "cannot open the configuration file");
}

}  // namespace

std::string closest_key(const std::string& key, const po::options_description& known) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(3, key.size() / 2) + 1;
  for (const auto& option : known.options()) {
    const std::size_t d = edit_distance(key, option->long_name());
    if (d < best_distance) {
      best_distance = d;
      best = option->long_name();
    }
  }
  return best;
}

std::map<std::string, Setting> read_config_file(const std::string& path, const po::options_description& known) {
  std::ifstream in;
  open_config_file(in, path);
  std::map<std::string, Setting> settings;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = path + ":" + std::to_string(number);
    refuse_nul_bytes(line, path, number);
    const auto comment = line.find_first_of("#;");
    const std::string text = trim(comment == std::string::npos ? line : line.substr(0, comment));
    if (text.empty()) continue;
    const auto equals = text.find('=');
    if (equals == std::string::npos) throw InputError(where + ": expected 'key = value', got '" + text + "'");
    const std::string key = trim(text.substr(0, equals));
    const std::string value = trim(text.substr(equals + 1));
    if (key.empty()) throw InputError(where + ": missing key before '='");
    check_known(key, where, known);
    if (settings.count(key))
      throw InputError(where + ": key '" + key + "' given twice (first at " + settings[key].origin + ")");
    settings[key] = Setting{value, where};
  }
  return settings;
}

void apply_overrides(std::map<std::string, Setting>& settings, const std::vector<std::string>& overrides,
                     const po::options_description& known) {
  std::set<std::string> given;
  for (const std::string& item : overrides) {
    const auto equals = item.find('=');
    if (equals == std::string::npos) throw InputError("command line: expected key=value, got '" + item + "'");
    const std::string key = trim(item.substr(0, equals));
    check_known(key, "command line", known);
    if (!given.insert(key).second) throw InputError("command line: key '" + key + "' given twice");
    settings[key] = Setting{trim(item.substr(equals + 1)), "command line"};
  }
}

void store_settings(const std::map<std::string, Setting>& settings, const po::options_description& known,
                    po::variables_map& vm) {
  for (const auto& [key, setting] : settings) {
    if (setting.value.empty()) throw InputError(setting.origin + ": key '" + key + "' has no value");
    po::parsed_options parsed(&known);
    parsed.options.push_back(po::option(key, {setting.value}));
    try {
      po::store(parsed, vm);
    } catch (const po::error& e) {
      throw InputError(setting.origin + ": key '" + key + "': invalid value '" + setting.value + "'");
    }
  }
  // Defaults for everything not given.
  po::parsed_options none(&known);
  po::store(none, vm);
  po::notify(vm);
}

namespace {

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

void read_sections_into(const std::string& path, SectionedConfig& out, int& current, int depth) {
  if (depth > 8) throw InputError(path + ": includes nested too deeply");
  std::ifstream in;
  open_config_file(in, path);
  out.text += "# ---- " + path + "\n";
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = path + ":" + std::to_string(number);
    refuse_nul_bytes(line, path, number);
    out.text += line + "\n";
    const auto comment = line.find('#');
    const std::string text = trim(comment == std::string::npos ? line : line.substr(0, comment));
    if (text.empty()) continue;
    if (text.front() == '[') {
      if (text.back() != ']') throw InputError(where + ": expected '[type name]', got '" + text + "'");
      std::istringstream words(text.substr(1, text.size() - 2));
      ConfigSection section;
      words >> section.type >> section.name;
      std::string extra;
      // [priors] is the one section without a name.
      if (section.type.empty() || (section.name.empty() != (section.type == "priors")) || (words >> extra))
        throw InputError(where + ": expected '[type name]' (e.g. [planet b]) or [priors], got '" + text + "'");
      section.origin = where;
      section.base_dir = directory_of(path);
      out.sections.push_back(section);
      current = static_cast<int>(out.sections.size()) - 1;
      continue;
    }
    const auto equals = text.find('=');
    if (equals == std::string::npos) throw InputError(where + ": expected 'key = value', got '" + text + "'");
    ConfigEntry e{trim(text.substr(0, equals)), trim(text.substr(equals + 1)), where};
    if (e.key.empty()) throw InputError(where + ": missing key before '='");
    if (e.key == "include") {
      if (e.value.empty()) throw InputError(where + ": include needs a file");
      const std::string included = e.value[0] == '/' ? e.value : directory_of(path) + "/" + e.value;
      const int saved = current;
      current = -1;  // an included file starts with its own global lines
      read_sections_into(included, out, current, depth + 1);
      current = saved;
      continue;
    }
    std::vector<ConfigEntry>& target = current >= 0 ? out.sections[current].entries : out.globals;
    for (const auto& previous : target)
      if (previous.key == e.key)
        throw InputError(where + ": key '" + e.key + "' given twice (first at " + previous.origin + ")");
    target.push_back(e);
  }
}

}  // namespace

SectionedConfig read_sectioned_config(const std::string& path) {
  SectionedConfig out;
  int current = -1;
  read_sections_into(path, out, current, 0);
  return out;
}

bool is_data_section(const ConfigSection& section) { return section.type == "rv" || section.type == "transits"; }

void add_data_section(const ConfigSection& s, Dataset& data) {
  const SourceKind kind = s.type == "rv" ? SourceKind::kRv : SourceKind::kTransits;
  data.add(parse_source_spec(kind, s.name, s.origin, s.entries, s.base_dir));
}

Dataset read_config_data(const std::string& path) {
  const SectionedConfig config = read_sectioned_config(path);
  Dataset data;
  std::set<std::string> section_names;
  for (const ConfigSection& s : config.sections) {
    if (!section_names.insert(s.type + " " + s.name).second)
      throw InputError(s.origin + ": section [" + s.type + " " + s.name + "] appears twice");
    if (is_data_section(s)) add_data_section(s, data);
  }
  data.finish();
  return data;
}

}  // namespace swarmfit
