#include "swarmfit/models/catalog.hpp"

#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "swarmfit/inference/hdf5_io.hpp"
#include "swarmfit/integrators/cuda_wait.hpp"
#include "swarmfit/models/likelihood.hpp"
#include "swarmfit/models/units.hpp"
#include "swarmfit/observations/input_error.hpp"
#include "swarmfit/observations/text_table.hpp"

namespace fs = std::filesystem;

namespace swarmfit {

long CatalogTarget::points() const {
  if (config_points >= 0) return config_points;
  long n = 0;
  for (const CatalogFile& f : files)
    if (f.usable) n += static_cast<long>(f.rows.size());
  return n;
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// A whole field as a finite number (a NUL or any trailing text makes it no number).
bool number(const std::string& text, double& value) {
  if (text.empty() || text.find('\0') != std::string::npos) return false;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(value);
}

// "lines 4, 7, 9 and 12 more".
std::string lines_of(const std::vector<int>& lines) {
  std::string s = lines.size() == 1 ? "line " : "lines ";
  for (std::size_t k = 0; k < lines.size() && k < 5; ++k) s += (k ? ", " : "") + std::to_string(lines[k]);
  if (lines.size() > 5) s += " and " + std::to_string(lines.size() - 5) + " more";
  return s;
}

double median(std::vector<double> x) {
  if (x.empty()) return kNaN;
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

double spread(const std::vector<CatalogRow>& rows) {  // standard deviation of the RVs
  if (rows.size() < 2) return 0;
  double mean = 0, sum = 0;
  for (const CatalogRow& r : rows) mean += r.rv;
  mean /= rows.size();
  for (const CatalogRow& r : rows) sum += (r.rv - mean) * (r.rv - mean);
  return std::sqrt(sum / (rows.size() - 1));
}

// The instrument name of NAME_n_TOKEN.vels in a fit: TOKEN_n, made of letters, digits, - and _.
std::string file_label(const std::string& file, int index) {
  std::string stem = fs::path(file).stem().string();
  std::string token, n;
  const auto last = stem.rfind('_');
  if (last != std::string::npos && last > 0) {
    const auto before = stem.rfind('_', last - 1);
    if (before != std::string::npos) {
      n = stem.substr(before + 1, last - before - 1);
      token = stem.substr(last + 1);
    }
  }
  if (token.empty() || n.empty() || n.find_first_not_of("0123456789") != std::string::npos) {
    token = "RV";
    n = std::to_string(index + 1);
  }
  std::string label;
  for (char c : token + "_" + n) label += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '-';
  return label;
}

// Reads and checks one .vels file (the rules of catalog.hpp).
// k_max: the largest K of the star's known planets (0: none), to judge the units by.
CatalogFile read_vels(const std::string& path, int index, double k_max) {
  CatalogFile f;
  f.path = path;
  f.label = file_label(path, index);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    f.usable = false;
    f.findings.push_back("cannot be read (missing): not used");
    return f;
  }
  std::string units;
  double offset = 0;
  std::vector<int> malformed, nonpositive, repeated, same_time, out_of_range, commented;
  std::set<std::tuple<double, double, double>> seen;
  std::set<long long> times;
  std::string line;
  for (int number_of_line = 1; std::getline(in, line); ++number_of_line) {
    const std::string t = trim(line);
    if (t.empty()) continue;
    if (t[0] == '#') {
      std::istringstream rest(t.substr(1));
      int numbers = 0;
      bool only_numbers = true;
      for (std::string w; rest >> w;) {
        double x = 0;
        only_numbers = only_numbers && number(w, x);
        ++numbers;
      }
      if (only_numbers && numbers >= 3) commented.push_back(number_of_line);
      const auto eq = t.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = upper(trim(t.substr(1, eq - 1))), value = trim(t.substr(eq + 1));
      if (key == "VALUE_UNITS") units = upper(value);
      if (key == "INSTRUMENT") f.instrument = value;
      double x = 0;
      if (key == "JD" && number(value, x)) offset = x;
      continue;
    }
    std::istringstream words(t);
    std::vector<std::string> fields;
    for (std::string w; words >> w;) fields.push_back(w);
    CatalogRow r;
    r.line = number_of_line;
    if (fields.size() != 3 || !number(fields[0], r.time) || !number(fields[1], r.rv) || !number(fields[2], r.error)) {
      malformed.push_back(number_of_line);
      continue;
    }
    if (!(r.error > 0)) {
      nonpositive.push_back(number_of_line);
      continue;
    }
    if (!seen.insert({r.time, r.rv, r.error}).second) {
      repeated.push_back(number_of_line);
      continue;
    }
    if (!times.insert(std::llround(r.time * 1e5)).second) {
      same_time.push_back(number_of_line);
      continue;
    }
    f.rows.push_back(r);
  }
  if (!commented.empty())
    f.findings.push_back(std::to_string(commented.size()) + " data lines commented out (" + lines_of(commented) +
                         "): left out, as the file says");
  if (!malformed.empty())
    f.findings.push_back(std::to_string(malformed.size()) + " rows are not three finite numbers (" +
                         lines_of(malformed) + "): dropped");
  if (!nonpositive.empty())
    f.findings.push_back(std::to_string(nonpositive.size()) + " rows with an error <= 0 (" + lines_of(nonpositive) +
                         "): dropped");
  if (!repeated.empty())
    f.findings.push_back(std::to_string(repeated.size()) + " rows repeat an earlier row exactly (" +
                         lines_of(repeated) + "): dropped");
  if (!same_time.empty())
    f.findings.push_back(std::to_string(same_time.size()) + " rows at the time (to 1e-5 d) of an earlier row with " +
                         "other values (" + lines_of(same_time) + "): the later dropped");
  // Units: the label's, unless the numbers say the other unit (catalog.hpp): the RVs by their
  // scatter against the star's largest known K, the errors by their size against that scatter.
  std::vector<double> raw_errors;
  for (const CatalogRow& r : f.rows) raw_errors.push_back(r.error);
  const double label = units == "KM/S" ? 1000.0 : 1.0, other = units == "KM/S" ? 1.0 : 1000.0;
  const double raw_rms = spread(f.rows), raw_error = median(raw_errors);
  double rv_scale = label, error_scale = label;
  if (f.rows.size() >= 3 && raw_rms > 0) {
    auto plausible_rms = [&](double scale) {
      return k_max <= 0 || (raw_rms * scale >= 0.01 * k_max && raw_rms * scale <= 100 * k_max);
    };
    if (k_max > 0 && !plausible_rms(label) && plausible_rms(other)) rv_scale = other;
    if (k_max <= 0 && units == "KM/S" && (raw_rms > 20 || raw_error > 1)) rv_scale = other;  // no K to judge by
    if (k_max <= 0 && units != "KM/S" && raw_error < 0.01) rv_scale = other;
    auto plausible_error = [&](double scale) {
      const double ratio = raw_error * scale / (raw_rms * rv_scale);
      return ratio >= 1e-3 && ratio <= 10;
    };
    error_scale = rv_scale;
    if (!plausible_error(rv_scale) && plausible_error(rv_scale == label ? other : label))
      error_scale = rv_scale == label ? other : label;
  }
  for (CatalogRow& r : f.rows) {
    r.rv *= rv_scale;
    r.error *= error_scale;
  }
  const std::string said = units.empty() ? "no units given" : "labelled " + units;
  auto unit = [](double scale) { return scale == 1.0 ? "m/s" : "km/s"; };
  char text[300];
  if (rv_scale != label || error_scale != label) {
    std::snprintf(text, sizeof text,
                  "%s, but the RVs (scatter %.3g, largest known K %.3g m/s) are in %s and the errors (median %.3g) "
                  "in %s: converted to m/s",
                  said.c_str(), raw_rms, k_max, unit(rv_scale), raw_error, unit(error_scale));
    f.findings.push_back(text);
  } else if (units == "KM/S") {
    f.findings.push_back("KM/S: RVs and errors converted to m/s");
  }
  if (f.rows.size() >= 5 && raw_rms > 0 && raw_error * error_scale > 10 * raw_rms * rv_scale) {
    std::snprintf(text, sizeof text,
                  "errors (median %.3g m/s) %.0f times the RVs' scatter: kept, the file weighs little",
                  raw_error * error_scale, raw_error * error_scale / (raw_rms * rv_scale));
    f.findings.push_back(text);
  }
  if (offset != 0) {
    for (CatalogRow& r : f.rows) r.time += offset;
    char text[120];
    std::snprintf(text, sizeof text, "times are JD - %.1f ('# JD' header): %.1f added", offset, offset);
    f.findings.push_back(text);
  }
  // JD now: no RV can be later than the moment the catalog is read.
  const double now =
      2440587.5 + std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() / 86400.0;
  std::vector<CatalogRow> kept;
  std::vector<int> future;
  for (const CatalogRow& r : f.rows) {
    if (r.time > now) future.push_back(r.line);
    if (r.time < 2.4e6)
      out_of_range.push_back(r.line);
    else
      kept.push_back(r);
  }
  f.rows = kept;
  if (!out_of_range.empty())
    f.findings.push_back(std::to_string(out_of_range.size()) + " rows with a time before JD 2400000 (" +
                         lines_of(out_of_range) + "): dropped");
  if (!future.empty()) {  // a clock that runs ahead is wrong for every row of the file
    f.findings.push_back(std::to_string(future.size()) + " rows with a time in the future (" + lines_of(future) +
                         "): the file's times are shifted, not used");
    f.usable = false;
  }
  return f;
}

// Finishes a file once the star's earlier files are known: the same spectra published twice.
void drop_shared_rows(CatalogFile& f, std::set<std::pair<long long, long long>>& star_rows) {
  std::vector<int> shared;
  std::vector<CatalogRow> kept;
  std::vector<std::pair<long long, long long>> mine;
  for (const CatalogRow& r : f.rows) {
    const std::pair<long long, long long> key{std::llround(r.time * 1e5), std::llround(r.rv * 1e3)};
    if (star_rows.count(key)) {
      shared.push_back(r.line);
    } else {
      kept.push_back(r);
      mine.push_back(key);
    }
  }
  star_rows.insert(mine.begin(), mine.end());
  if (!shared.empty())
    f.findings.push_back(std::to_string(shared.size()) + " rows (" + lines_of(shared) +
                         ") hold a time and RV an earlier file of this star holds (the same spectra published twice): "
                         "dropped");
  f.rows = kept;
  if (f.rows.size() < 3 && f.usable) {
    f.usable = false;
    f.findings.push_back(std::to_string(f.rows.size()) + " rows left: not used");
  }
}

// Finishes a star's files: two files holding the same spectra under time stamps shifted by a
// constant (the archive has Keck files whose times are another file's less exactly 1000 d:
// HD4203, HD49674, HD68988, HD83443). For each pair, the most common difference of their times
// (within 2e-3 d) of at least 1 d: when it matches at least 5 rows and 60% of the smaller file,
// the smaller file (the later one on a tie) is not used, as its time stamps cannot both be right.
void drop_shifted_copies(std::vector<CatalogFile>& files) {
  for (std::size_t i = 0; i < files.size(); ++i)
    for (std::size_t j = i + 1; j < files.size(); ++j) {
      CatalogFile &a = files[i], &b = files[j];
      if (!a.usable || !b.usable || a.rows.empty() || b.rows.empty()) continue;
      std::vector<double> shifts;  // a's times less b's
      shifts.reserve(a.rows.size() * b.rows.size());
      for (const CatalogRow& x : a.rows)
        for (const CatalogRow& y : b.rows) shifts.push_back(x.time - y.time);
      std::sort(shifts.begin(), shifts.end());
      std::size_t best = 0, at = 0;
      for (std::size_t lo = 0, hi = 0; lo < shifts.size(); ++lo) {
        while (hi < shifts.size() && shifts[hi] <= shifts[lo] + 2e-3) ++hi;
        const double centre = 0.5 * (shifts[lo] + shifts[hi - 1]);
        if (hi - lo > best && std::abs(centre) >= 1.0) {
          best = hi - lo;
          at = lo;
        }
      }
      const std::size_t smaller = std::min(a.rows.size(), b.rows.size());
      if (best < 5 || best < 0.6 * smaller) continue;
      const double shift = shifts[at];  // a = b + shift
      CatalogFile& dropped = b.rows.size() <= a.rows.size() ? b : a;
      const CatalogFile& kept = &dropped == &b ? a : b;
      const double moved = &dropped == &b ? -shift : shift;  // dropped = kept + moved
      char text[300];
      std::snprintf(text, sizeof text,
                    "%zu of its %zu times are those of %s %s %.3f d (the same spectra with shifted time stamps): "
                    "not used",
                    std::min(best, dropped.rows.size()), dropped.rows.size(),
                    fs::path(kept.path).filename().string().c_str(), moved < 0 ? "less" : "plus", std::abs(moved));
      dropped.findings.push_back(text);
      dropped.usable = false;
    }
}

// The token of a catalog file's instrument in its name (GJ436_2_KECK.vels: KECK).
std::string file_token(const std::string& path) {
  const std::string stem = fs::path(path).stem().string();
  const std::size_t first = stem.find('_');
  const std::size_t second = first == std::string::npos ? first : stem.find('_', first + 1);
  return second == std::string::npos ? std::string() : stem.substr(second + 1);
}

// Finishes a star's files: rows of a later file at the times (within 2e-3 d) of an earlier file's
// rows of the same instrument, but with other RVs: the same spectra reduced again (GJ 436's two
// Keck files share 53 epochs; CoRoT-2's, HAT-P-1's and HD 3651's files likewise). Counting them
// twice would double their weight; with 3 or more such rows the later file's are dropped. (Files
// of different instruments may observe at the same time: HD 17156's HJS and HET.)
void drop_reduced_twice(std::vector<CatalogFile>& files) {
  for (std::size_t j = 1; j < files.size(); ++j) {
    CatalogFile& f = files[j];
    if (!f.usable) continue;
    const std::string token = file_token(f.path);
    std::vector<int> again;
    std::vector<CatalogRow> kept;
    std::string earlier;
    for (const CatalogRow& r : f.rows) {
      bool seen = false;
      for (std::size_t i = 0; i < j && !seen; ++i) {
        const CatalogFile& e = files[i];
        if (!e.usable || token.empty() || file_token(e.path) != token) continue;
        for (const CatalogRow& q : e.rows)
          if (std::abs(q.time - r.time) <= 2e-3) {
            seen = true;
            if (earlier.empty()) earlier = fs::path(e.path).filename().string();
            break;
          }
      }
      if (seen)
        again.push_back(r.line);
      else
        kept.push_back(r);
    }
    if (again.size() < 3) continue;
    f.findings.push_back(std::to_string(again.size()) + " rows (" + lines_of(again) +
                         ") at the times (within 2e-3 d) of rows of " + earlier +
                         ", the same instrument: the same spectra reduced twice, dropped");
    f.rows = kept;
    if (f.rows.size() < 3) {
      f.usable = false;
      f.findings.push_back(std::to_string(f.rows.size()) + " rows left: not used");
    }
  }
}

struct SysFile {
  std::string name, star;
  double mass = 0;
  bool placeholder = false, archive = false;
  std::vector<std::string> rv_files;
};

SysFile read_sys(const fs::path& path) {
  SysFile s;
  s.name = path.stem().string();
  std::ifstream in(path);
  std::string line;
  bool teff_na = false;
  for (int k = 0; std::getline(in, line); ++k) {
    if (k == 0 && line.find("exoplanetarchive") != std::string::npos) s.archive = true;
    const std::string t = trim(line);
    std::istringstream words(t);
    std::string key;
    words >> key;
    std::string rest;
    std::getline(words, rest);
    rest = trim(rest);
    if (key == "Name") s.star = rest;
    if (key == "Teff" && rest == "NA") teff_na = true;
    double x = 0;
    if (key == "Mass" && number(rest, x)) s.mass = x;
    if (key == "RV[]") {
      std::string file = rest;
      file.erase(std::remove(file.begin(), file.end(), '"'), file.end());
      s.rv_files.push_back(trim(file));
    }
  }
  s.placeholder = teff_na && s.mass == 1.0;
  if (s.star.empty()) s.star = s.name;
  return s;
}

// planets.csv's rows by system, with the columns the catalog uses.
struct PlanetRow {
  CatalogPlanet planet;
  double star_mass = 0;  // mstar_K_msun
};
std::map<std::string, std::vector<PlanetRow>> read_planets(const std::string& path) {
  std::map<std::string, std::vector<PlanetRow>> out;
  const std::vector<TableRow> rows = read_csv(path);
  if (rows.empty()) throw InputError(path + ": empty planet table");
  std::map<std::string, std::size_t> column;
  for (std::size_t k = 0; k < rows[0].fields.size(); ++k) column[trim(rows[0].fields[k])] = k;
  for (const char* need : {"system", "planet", "period_days", "K_ms", "e", "omega_deg", "tperi_or_tc", "time_kind"})
    if (!column.count(need)) throw InputError(path + ":1: the planet table has no column '" + need + "'");
  for (std::size_t k = 1; k < rows.size(); ++k) {
    const std::vector<std::string>& f = rows[k].fields;
    if (f.empty() || (f.size() == 1 && trim(f[0]).empty())) continue;
    auto text = [&](const char* name) {
      const auto c = column.find(name);
      return c != column.end() && c->second < f.size() ? trim(f[c->second]) : std::string();
    };
    const std::string where = path + ":" + std::to_string(rows[k].line);
    if (f.size() != rows[0].fields.size())
      throw InputError(where + ": expected " + std::to_string(rows[0].fields.size()) +
                       " fields (as the header), found " + std::to_string(f.size()));
    // An empty field is a value the archive does not give; anything else must be a finite number.
    auto value = [&](const char* name) {
      const std::string t = text(name);
      if (t.empty()) return kNaN;
      double x = kNaN;
      if (!number(t, x) || !std::isfinite(x))
        throw InputError(where + ": column '" + name + "': '" + t + "' is not a finite number");
      return x;
    };
    const std::string kind = text("time_kind");
    if (!kind.empty() && kind.rfind("tperi", 0) != 0 && kind.rfind("tc", 0) != 0)
      throw InputError(where + ": column 'time_kind': '" + kind + "' (expected tperi, tc or empty)");
    if (value("period_days") <= 0) throw InputError(where + ": column 'period_days': must be > 0");
    PlanetRow r;
    CatalogPlanet& p = r.planet;
    p.letter = text("planet");
    p.period = value("period_days");
    p.period_err = value("period_err");
    p.K = value("K_ms");
    p.e = value("e");
    p.omega_deg = value("omega_deg");
    p.epoch = value("tperi_or_tc");
    p.epoch_kind = text("time_kind").rfind("tperi", 0) == 0 ? "tperi"
                   : text("time_kind").rfind("tc", 0) == 0  ? "tc"
                                                            : "";
    if (!std::isfinite(p.epoch)) p.epoch_kind.clear();
    p.status = text("status");
    p.flags = text("flags");
    p.transiting = text("transiting") == "1";
    p.a_au = value("a_au") > 0 ? value("a_au") : 0.0;
    r.star_mass = value("mstar_K_msun");
    out[text("system")].push_back(r);
  }
  return out;
}

// A planet's letter as a section name: letters, digits, - and _ only.
std::string planet_name(const std::string& letter, int index) {
  std::string s;
  for (char c : letter) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s.empty() ? "p" + std::to_string(index + 1) : s;
}

// A file whose RVs fall into two levels far apart (a gap in the sorted RVs wider than 1 km/s and
// than 4 times the largest K of the star's known planets, with 3 or more RVs on each side) holds
// more than one star, or absolute and relative RVs mixed: not used.
void check_levels(CatalogTarget& t) {
  double k_max = 0;
  for (const CatalogPlanet& p : t.planets)
    if (p.K > 0) k_max = std::max(k_max, p.K);
  for (CatalogFile& f : t.files) {
    if (!f.usable || f.rows.size() < 6) continue;
    std::vector<double> rv;
    for (const CatalogRow& r : f.rows) rv.push_back(r.rv);
    std::sort(rv.begin(), rv.end());
    double gap = 0;
    for (std::size_t k = 3; k + 3 <= rv.size(); ++k) gap = std::max(gap, rv[k] - rv[k - 1]);
    if (gap > std::max(1000.0, 4 * k_max)) {
      char text[240];
      std::snprintf(text, sizeof text,
                    "RVs in two levels %.0f m/s apart (more than one star, or absolute and relative RVs mixed): "
                    "not used",
                    gap);
      f.findings.push_back(text);
      f.usable = false;
    }
  }
}

// Rossiter-McLaughlin sequences (the rule in catalog.hpp): a file's rows inside one transit of a
// known transiting planet, 5 or more of them, dropped. The window is Winn 2010's (Exoplanets, eq.
// 14-16) central duration of a circular orbit, widened by half for the inclination and the
// ephemeris' drift left unknown.
void drop_rm_sequences(CatalogTarget& t) {
  const double mass = t.star_mass > 0 ? t.star_mass : 1.0;
  for (const CatalogPlanet& p : t.planets) {
    if (!p.transiting || p.epoch_kind != "tc" || !(p.period > 0) || !std::isfinite(p.epoch)) continue;
    const double a = p.a_au > 0 ? p.a_au : std::cbrt(mass * (p.period / 365.25) * (p.period / 365.25));
    const double radius = std::pow(mass, 0.8) * 0.00465047;  // AU
    const double duration = p.period / units::kPi * radius / a;
    const double half = 0.75 * duration;
    for (CatalogFile& f : t.files) {
      if (!f.usable) continue;
      std::map<long long, std::vector<int>> transits;  // transit number -> rows inside it
      for (std::size_t k = 0; k < f.rows.size(); ++k) {
        const long long n = std::llround((f.rows[k].time - p.epoch) / p.period);
        if (std::abs(f.rows[k].time - p.epoch - n * p.period) <= half) transits[n].push_back(static_cast<int>(k));
      }
      std::set<int> dropped;
      for (const auto& [n, rows] : transits)
        if (rows.size() >= 5) dropped.insert(rows.begin(), rows.end());
      if (dropped.empty()) continue;
      std::vector<int> lines;
      std::vector<CatalogRow> kept;
      for (std::size_t k = 0; k < f.rows.size(); ++k) {
        if (dropped.count(static_cast<int>(k)))
          lines.push_back(f.rows[k].line);
        else
          kept.push_back(f.rows[k]);
      }
      char text[200];
      std::snprintf(
          text, sizeof text,
          " inside transits of planet %s (within %.3f d of mid-transit, 0.75 x its %.3f-d duration estimate): "
          "a Rossiter-McLaughlin sequence, which the model does not describe: dropped",
          p.letter.c_str(), half, duration);
      f.findings.push_back(std::to_string(lines.size()) + " rows (" + lines_of(lines) + ")" + text);
      f.rows = kept;
      if (f.rows.size() < 3) {
        f.usable = false;
        f.findings.push_back(std::to_string(f.rows.size()) + " rows left: not used");
      }
    }
  }
}

// Files out of phase with a transit ephemeris (the rule in catalog.hpp). A transiting planet's
// conjunction fixes its RV curve's phase: for a circular orbit v = -K sin(2 pi (t - tc) / P)
// (Winn 2010, Exoplanets, eq. 1-6 at nu + omega = pi / 2). Each usable file with enough rows is fitted
// alone with c + a cos(phi) + b sin(phi) at the planet's period (weighted least squares); the
// fitted first harmonic R cos(phi - psi) should have psi = -pi / 2. A file whose psi is off by
// more than 5 of its own standard errors and more than 20 degrees plus 2 e (the first harmonic's
// shift on an eccentric orbit) is out of phase: a file's time stamps shifted by a constant (XO-5's
// Keck file, 4000 d early) does this. Only where another file of the star is in phase is the
// shifted file dropped; where no file is, the table's epoch is what is off (CoRoT-1 b, HD 209458 b
// carry epochs a fraction of a period away), and it is reported, the files kept.
void check_transit_phase(CatalogTarget& t) {
  for (const CatalogPlanet& p : t.planets) {
    if (!p.transiting || p.epoch_kind != "tc" || !(p.period > 0) || !(p.K > 0) || !std::isfinite(p.epoch)) continue;
    bool dominant = true;  // the other planets' signals three times weaker: one harmonic describes the file
    for (const CatalogPlanet& q : t.planets)
      if (&q != &p && q.K > p.K / 3) dominant = false;
    if (!dominant || p.e > 0.3) continue;
    struct Phase {
      CatalogFile* file;
      double offset_deg, sigma_deg;
    };
    std::vector<Phase> fitted;
    for (CatalogFile& f : t.files) {
      if (!f.usable || f.rows.size() < 8) continue;
      Eigen::Matrix3d normal = Eigen::Matrix3d::Zero();
      Eigen::Vector3d right = Eigen::Vector3d::Zero();
      for (const CatalogRow& r : f.rows) {
        const double phi = 2 * units::kPi * (r.time - p.epoch) / p.period;
        const Eigen::Vector3d basis(1.0, std::cos(phi), std::sin(phi));
        const double w = 1.0 / std::max(r.error * r.error, 1.0);
        normal += w * basis * basis.transpose();
        right += w * r.rv * basis;
      }
      const Eigen::LDLT<Eigen::Matrix3d> ldlt(normal);
      if (ldlt.info() != Eigen::Success || !(ldlt.rcond() > 1e-8)) continue;  // phases that do not cover the orbit
      const Eigen::Vector3d x = ldlt.solve(right);
      const Eigen::Matrix3d covariance = ldlt.solve(Eigen::Matrix3d::Identity());
      // The weights take the quoted errors at face value; the scatter about the fit (jitter, other
      // planets) scales the covariance where it is larger.
      double chi2 = 0;
      for (const CatalogRow& r : f.rows) {
        const double phi = 2 * units::kPi * (r.time - p.epoch) / p.period;
        const double d = r.rv - (x(0) + x(1) * std::cos(phi) + x(2) * std::sin(phi));
        chi2 += d * d / std::max(r.error * r.error, 1.0);
      }
      const double inflate = std::max(1.0, chi2 / (static_cast<double>(f.rows.size()) - 3));
      const double a = x(1), b = x(2), amplitude = std::hypot(a, b);
      // psi = atan2(b, a); its variance by the gradient (-b, a) / R^2.
      const double var_psi = inflate *
                             (b * b * covariance(1, 1) - 2 * a * b * covariance(1, 2) + a * a * covariance(2, 2)) /
                             std::pow(amplitude, 4);
      if (!(amplitude > 5 * std::sqrt(inflate * (covariance(1, 1) + covariance(2, 2)) / 2))) continue;  // no signal
      double offset = std::atan2(b, a) + units::kPi / 2;
      offset = std::remainder(offset, 2 * units::kPi);
      fitted.push_back({&f, offset * 180 / units::kPi, std::sqrt(var_psi) * 180 / units::kPi});
    }
    const double allowed = 20 + 2 * p.e * 180 / units::kPi;
    auto out_of_phase = [&](const Phase& q) { return std::fabs(q.offset_deg) > std::max(allowed, 5 * q.sigma_deg); };
    bool any_in_phase = false;
    for (const Phase& q : fitted) any_in_phase = any_in_phase || !out_of_phase(q);
    for (const Phase& q : fitted) {
      if (!out_of_phase(q)) continue;
      char text[300];
      if (any_in_phase) {
        std::snprintf(text, sizeof text,
                      "RVs %.0f +- %.0f deg out of phase with planet %s's transits (another file is in phase): its "
                      "times are shifted, not used",
                      q.offset_deg, q.sigma_deg, p.letter.c_str());
        q.file->findings.push_back(text);
        q.file->usable = false;
      } else {
        std::snprintf(text, sizeof text,
                      "RVs %.0f +- %.0f deg out of phase with planet %s's transit epoch in the table, as every file "
                      "of the star: the table's epoch is off (the fit's tc prior spans a period); kept",
                      q.offset_deg, q.sigma_deg, p.letter.c_str());
        q.file->findings.push_back(text);
      }
    }
  }
}

void finish_target(CatalogTarget& t) {
  check_levels(t);
  drop_rm_sequences(t);
  check_transit_phase(t);
  double first = std::numeric_limits<double>::infinity(), last = -first;
  for (const CatalogFile& f : t.files)
    if (f.usable)
      for (const CatalogRow& r : f.rows) {
        first = std::min(first, r.time);
        last = std::max(last, r.time);
      }
  if (t.points() == 0) {
    t.skip = "no usable RV file";
    return;
  }
  const double span = last - first;
  int fitted = 0;
  for (CatalogPlanet& p : t.planets) {
    if (!(p.period > 0) || !(p.K > 0)) {
      p.fitted = false;
      p.why_not = "no period or K in the table";
    } else if (p.period > 1.5 * span) {
      p.fitted = false;
      char text[120];
      std::snprintf(text, sizeof text, "P = %.4g d > 1.5 x the data's span (%.4g d)", p.period, span);
      p.why_not = text;
    }
    fitted += p.fitted;
  }
  if (fitted == 0) {
    t.skip = t.planets.empty() ? "no known planet in the table" : "no known planet the data can constrain";
    return;
  }
  int used = 0;
  for (const CatalogFile& f : t.files) used += f.usable;
  const long free = 5L * fitted + 2L * used;
  if (t.points() < free + 5)
    t.skip = std::to_string(t.points()) + " RVs for " + std::to_string(free) + " free parameters (fewer than 5 more)";
}

// The stars of a CSV table of targets (columns target, star_mass, rv_files: the files separated by
// ';', relative to the table's folder), as the .sys files would list them.
std::vector<SysFile> read_target_table(const std::string& path) {
  const std::vector<TableRow> rows = read_csv(path);
  if (rows.empty()) throw InputError(path + ": empty target table");
  std::map<std::string, std::size_t> column;
  for (std::size_t k = 0; k < rows[0].fields.size(); ++k) column[trim(rows[0].fields[k])] = k;
  for (const char* need : {"target", "star_mass", "rv_files"})
    if (!column.count(need)) throw InputError(path + ":1: the target table has no column '" + need + "'");
  std::vector<SysFile> out;
  std::set<std::string> names;
  for (std::size_t k = 1; k < rows.size(); ++k) {
    const std::vector<std::string>& f = rows[k].fields;
    if (f.empty() || (f.size() == 1 && trim(f[0]).empty())) continue;
    const std::string where = path + ":" + std::to_string(rows[k].line);
    auto text = [&](const char* name) { return column[name] < f.size() ? trim(f[column[name]]) : std::string(); };
    SysFile s;
    s.name = s.star = text("target");
    s.archive = true;
    if (s.name.empty() || s.name.find_first_of("/ ") != std::string::npos)
      throw InputError(where + ": column 'target': a name without spaces or slashes is needed");
    if (!names.insert(s.name).second) throw InputError(where + ": target '" + s.name + "' twice");
    if (!number(text("star_mass"), s.mass) || !(s.mass > 0))
      throw InputError(where + ": column 'star_mass': '" + text("star_mass") + "' is not a mass > 0 (Msun)");
    std::stringstream files(text("rv_files"));
    for (std::string file; std::getline(files, file, ';');)
      if (!trim(file).empty()) s.rv_files.push_back(trim(file));
    out.push_back(s);
  }
  return out;
}

std::vector<CatalogTarget> read_folder(const std::string& folder, const std::string& planets_csv,
                                       const std::vector<SysFile>* table = nullptr) {
  if (!fs::is_directory(folder)) throw InputError("folder '" + folder + "' is not a folder");
  const auto planets = read_planets(planets_csv);
  std::vector<SysFile> files;
  if (table) {
    files = *table;
  } else {
    std::vector<fs::path> sys;
    for (const auto& entry : fs::directory_iterator(folder))
      if (entry.path().extension() == ".sys") sys.push_back(entry.path());
    std::sort(sys.begin(), sys.end());
    for (const fs::path& p : sys) files.push_back(read_sys(p));
  }
  // Archive-format stars first: a hand-made (legacy) file whose RV files an archive star already
  // lists repeats that star.
  std::stable_sort(files.begin(), files.end(),
                   [](const SysFile& a, const SysFile& b) { return a.archive > b.archive; });
  std::map<std::string, std::string> owner;  // RV file -> the first target listing it
  std::vector<CatalogTarget> out;
  for (const SysFile& s : files) {
    CatalogTarget t;
    t.name = s.name;
    t.star = s.star;
    const auto rows = planets.find(s.name);
    if (rows != planets.end())
      for (const PlanetRow& r : rows->second) t.planets.push_back(r.planet);
    const double oec = rows != planets.end() && !rows->second.empty() ? rows->second[0].star_mass : kNaN;
    if (oec > 0) {
      t.star_mass = oec;
      t.mass_source = "planets.csv";
    } else if (s.mass > 0) {
      t.star_mass = s.mass;
      t.mass_source = table ? "the target table" : s.placeholder ? ".sys placeholder" : ".sys";
      if (s.placeholder) t.findings.push_back("star mass 1 Msun is the .sys placeholder (Teff NA): used as is");
    } else {
      t.skip = "no stellar mass";
    }
    std::string repeats;
    bool all_seen = !s.rv_files.empty();
    for (const std::string& file : s.rv_files) {
      const auto o = owner.find(file);
      if (o == owner.end()) {
        all_seen = false;
      } else if (repeats.empty()) {
        repeats = o->second;
      }
    }
    if (all_seen && !s.archive) {
      t.skip = "repeats " + repeats + " (the same RV files)";
      out.push_back(t);
      continue;
    }
    std::set<std::pair<long long, long long>> star_rows;
    for (std::size_t k = 0; k < s.rv_files.size(); ++k) {
      owner.emplace(s.rv_files[k], s.name);
      double k_max = 0;
      for (const CatalogPlanet& p : t.planets)
        if (p.K > 0) k_max = std::max(k_max, p.K);
      CatalogFile f = read_vels((fs::path(folder) / s.rv_files[k]).string(), static_cast<int>(k), k_max);
      if (f.usable) drop_shared_rows(f, star_rows);
      t.files.push_back(std::move(f));
    }
    drop_shifted_copies(t.files);
    drop_reduced_twice(t.files);
    // Labels are unique within the target.
    std::set<std::string> labels;
    for (CatalogFile& f : t.files) {
      std::string label = f.label;
      for (int k = 2; labels.count(label); ++k) label = f.label + "-" + std::to_string(k);
      f.label = label;
      labels.insert(label);
    }
    out.push_back(std::move(t));
  }
  // Rows (time to 1e-4 d, RV to 0.01 m/s) that files of other stars hold too: a file sharing rows
  // with two or more other stars holds their spectra (a table of several stars), not used.
  std::map<std::pair<long long, long long>, std::set<std::size_t>> holders;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i].skip.empty())
      for (const CatalogFile& f : out[i].files)
        if (f.usable)
          for (const CatalogRow& r : f.rows) holders[{std::llround(r.time * 1e4), std::llround(r.rv * 100)}].insert(i);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!out[i].skip.empty()) continue;
    for (CatalogFile& f : out[i].files) {
      if (!f.usable) continue;
      std::set<std::size_t> others;
      long shared = 0;
      for (const CatalogRow& r : f.rows) {
        const std::set<std::size_t>& h = holders[{std::llround(r.time * 1e4), std::llround(r.rv * 100)}];
        shared += h.size() > 1;
        for (std::size_t j : h)
          if (j != i) others.insert(j);
      }
      if (others.size() >= 2) {
        std::string names;
        for (std::size_t j : others) names += (names.empty() ? "" : ", ") + out[j].name;
        f.findings.push_back(std::to_string(shared) + " rows are rows of other stars' files (" + names +
                             "): a table of several stars, not used");
        f.usable = false;
      }
    }
  }
  for (CatalogTarget& t : out)
    if (t.skip.empty()) finish_target(t);
  return out;
}

std::string format(double x) {
  char text[40];
  std::snprintf(text, sizeof text, "%.10g", x);
  return text;
}

// For the cleaned data files: round-trips (a JD with its fraction needs 12 digits and more).
std::string exact(double x) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

void write_text(const std::string& path, const std::string& text) {
  h5::AtomicFile file(path);
  {
    std::ofstream out(file.partial_path(), std::ios::binary);
    out << text;
    if (!out.flush()) throw std::runtime_error(path + ": cannot write");
  }
  file.commit();
}

const char* const kQuantity[6] = {"period", "K", "mass_jupiter", "e", "omega", "a"};
const char* const kQuantityColumn[6] = {"period_d", "K_ms", "msini_mjup", "e", "omega_deg", "a_au"};

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string result_header() {
  std::string h =
      "target,planet,status,points,generations,seconds,worst_rhat,min_ess,max_log_likelihood,table_period_d,"
      "table_K_ms";
  for (const char* q : kQuantityColumn) h += std::string(",") + q + "," + q + "_16," + q + "_84";
  return h + "\n";
}

std::string result_line(const CatalogResult& r) {
  std::string s = csv_field(r.target) + "," + csv_field(r.planet) + "," + csv_field(r.status) + "," +
                  std::to_string(r.points) + "," + std::to_string(r.generations) + "," + format(r.seconds) + "," +
                  format(r.worst_rhat) + "," + format(r.min_ess) + "," + format(r.max_log_likelihood) + "," +
                  format(r.table_period) + "," + format(r.table_K);
  for (const auto& v : r.value) s += "," + format(v[0]) + "," + format(v[1]) + "," + format(v[2]);
  return s + "\n";
}

std::vector<CatalogResult> read_results(const std::string& path) {
  std::vector<CatalogResult> out;
  const std::vector<TableRow> rows = read_csv(path);
  for (std::size_t k = 1; k < rows.size(); ++k) {
    const std::vector<std::string>& f = rows[k].fields;
    if (f.size() < 11 + 18) continue;
    CatalogResult r;
    r.target = f[0];
    r.planet = f[1];
    r.status = f[2];
    double x = 0;
    auto num = [&](const std::string& s) { return number(s, x) ? x : kNaN; };
    r.points = static_cast<long>(num(f[3]));
    r.generations = static_cast<long>(num(f[4]));
    r.seconds = num(f[5]);
    r.worst_rhat = num(f[6]);
    r.min_ess = num(f[7]);
    r.max_log_likelihood = num(f[8]);
    r.table_period = num(f[9]);
    r.table_K = num(f[10]);
    for (int q = 0; q < 6; ++q)
      for (int j = 0; j < 3; ++j) r.value[q][j] = num(f[11 + 3 * q + j]);
    out.push_back(r);
  }
  return out;
}

// The summary rows of a target: a row per planet (fitted or not), or one for a skipped target.
std::vector<CatalogResult> target_results(const CatalogTarget& t, const std::string& status,
                                          const std::vector<SummaryRow>& summary) {
  std::vector<CatalogResult> out;
  for (std::size_t k = 0; k < t.planets.size(); ++k) {
    const CatalogPlanet& p = t.planets[k];
    CatalogResult r;
    r.target = t.name;
    r.planet = p.letter;
    r.points = t.points();
    r.table_period = p.period;
    r.table_K = p.K;
    r.status = p.fitted || status.rfind("skipped", 0) == 0 ? status : "not fitted: " + p.why_not;
    r.worst_rhat = r.min_ess = r.max_log_likelihood = r.seconds = kNaN;
    for (auto& v : r.value) v[0] = v[1] = v[2] = kNaN;
    const std::string suffix = "_" + planet_name(p.letter, static_cast<int>(k));
    for (const SummaryRow& row : summary)
      for (int q = 0; q < 6; ++q)
        if (p.fitted && row.name == kQuantity[q] + suffix) {
          r.value[q][0] = row.median;
          r.value[q][1] = row.lower;
          r.value[q][2] = row.upper;
        }
    out.push_back(r);
  }
  if (out.empty()) {
    CatalogResult r;
    r.target = t.name;
    r.status = status;
    r.points = t.points();
    r.worst_rhat = r.min_ess = r.max_log_likelihood = r.seconds = kNaN;
    for (auto& v : r.value) v[0] = v[1] = v[2] = kNaN;
    out.push_back(r);
  }
  return out;
}

void write_summary(const std::string& output, const std::vector<CatalogResult>& results) {
  std::string csv = result_header();
  for (const CatalogResult& r : results) csv += result_line(r);
  write_text((fs::path(output) / "summary.csv").string(), csv);
  const std::string path = (fs::path(output) / "summary.h5").string();
  h5::AtomicFile file(path);
  {
    h5::Handle f(H5Fcreate(file.partial_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), path);
    std::vector<std::string> target, planet, status;
    std::vector<double> column;
    const hsize_t n = results.size();
    for (const CatalogResult& r : results) {
      target.push_back(r.target);
      planet.push_back(r.planet);
      status.push_back(r.status);
    }
    h5::write_strings(f, "target", target);
    h5::write_strings(f, "planet", planet);
    h5::write_strings(f, "status", status);
    auto write = [&](const std::string& name, auto get) {
      column.clear();
      for (const CatalogResult& r : results) column.push_back(get(r));
      h5::write(f, name, {n}, column.data());
    };
    write("points", [](const CatalogResult& r) { return static_cast<double>(r.points); });
    write("generations", [](const CatalogResult& r) { return static_cast<double>(r.generations); });
    write("seconds", [](const CatalogResult& r) { return r.seconds; });
    write("worst_rhat", [](const CatalogResult& r) { return r.worst_rhat; });
    write("min_ess", [](const CatalogResult& r) { return r.min_ess; });
    write("max_log_likelihood", [](const CatalogResult& r) { return r.max_log_likelihood; });
    write("table_period_d", [](const CatalogResult& r) { return r.table_period; });
    write("table_K_ms", [](const CatalogResult& r) { return r.table_K; });
    for (int q = 0; q < 6; ++q) {
      const std::string name = kQuantityColumn[q];
      write(name, [q](const CatalogResult& r) { return r.value[q][0]; });
      write(name + "_16", [q](const CatalogResult& r) { return r.value[q][1]; });
      write(name + "_84", [q](const CatalogResult& r) { return r.value[q][2]; });
    }
  }
  file.commit();
}

std::string report_text(const std::vector<CatalogTarget>& targets) {
  std::string s = "# swarmfit catalog: what the checks found, per target and file\n";
  for (const CatalogTarget& t : targets) {
    char mass[32];
    std::snprintf(mass, sizeof mass, "%.6g", t.star_mass);
    s += t.name + " (" + t.star + ", " + mass + " Msun from " + t.mass_source + ", " + std::to_string(t.points()) +
         (t.config.empty() ? " RVs): " : " RVs and transit times): ") +
         (t.skip.empty() ? "fitted" : "skipped: " + t.skip) + "\n";
    for (const std::string& line : t.findings) s += "  " + line + "\n";
    for (const CatalogFile& f : t.files) {
      s += "  " + fs::path(f.path).filename().string() + " [" + f.label + "]: " + std::to_string(f.rows.size()) +
           " rows" + (f.usable ? "" : ", not used") + "\n";
      for (const std::string& line : f.findings) s += "    " + line + "\n";
    }
    for (const CatalogPlanet& p : t.planets)
      if (!p.fitted) s += "  planet " + p.letter + " not fitted: " + p.why_not + "\n";
  }
  return s;
}

}  // namespace

std::vector<CatalogTarget> read_catalog(const CatalogSettings& settings) {
  const SectionedConfig c = read_sectioned_config(settings.description);
  const std::string base = fs::path(settings.description).parent_path().string();
  auto resolve = [&](const std::string& p) { return fs::path(p).is_absolute() || base.empty() ? p : base + "/" + p; };
  std::string folder, planets, table;
  for (const ConfigEntry& e : c.globals) {
    if (e.key == "folder") folder = resolve(e.value);
    if (e.key == "planets") planets = e.value;
    if (e.key == "targets") table = resolve(e.value);
  }
  std::vector<CatalogTarget> targets;
  if (!folder.empty() && !table.empty())
    throw InputError(settings.description + ": give key 'folder' or key 'targets', not both");
  if (!table.empty()) {  // a CSV of targets, their files beside it
    if (planets.empty())
      throw InputError(settings.description + ": key 'targets' needs key 'planets' (the planet table)");
    const std::vector<SysFile> rows = read_target_table(table);
    const std::string dir = fs::path(table).parent_path().string();
    targets = read_folder(dir.empty() ? "." : dir, resolve(planets), &rows);
  } else if (!folder.empty()) {
    if (planets.empty())
      throw InputError(settings.description + ": key 'folder' needs key 'planets' (the planet table)");
    targets = read_folder(folder, fs::path(planets).is_absolute() ? planets : folder + "/" + planets);
  }
  for (const ConfigSection& s : c.sections) {
    if (s.type != "target") throw InputError(s.origin + ": unknown section type '" + s.type + "' (expected target)");
    auto found = std::find_if(targets.begin(), targets.end(), [&](const CatalogTarget& t) { return t.name == s.name; });
    std::vector<ConfigEntry> overrides;
    std::string config;
    for (const ConfigEntry& e : s.entries)
      if (e.key == "config")
        config = fs::path(e.value).is_absolute() ? e.value : s.base_dir + "/" + e.value;
      else
        overrides.push_back(e);
    if (!config.empty()) {
      if (found != targets.end()) throw InputError(s.origin + ": target '" + s.name + "' is a star of the folder too");
      CatalogTarget t;
      t.name = t.star = s.name;
      t.config = config;
      t.overrides = overrides;
      t.mass_source = "its configuration";
      targets.push_back(t);
    } else if (found == targets.end()) {
      throw InputError(s.origin + ": target '" + s.name + "' is not a star of the folder and has no 'config'");
    } else {
      found->overrides = overrides;
    }
  }
  if (targets.empty())
    throw InputError(settings.description + ": no targets (give 'folder' or [target NAME] sections)");
  if (!settings.only.empty()) {
    std::vector<CatalogTarget> picked;
    for (const std::string& name : settings.only) {
      auto t = std::find_if(targets.begin(), targets.end(), [&](const CatalogTarget& x) { return x.name == name; });
      if (t == targets.end()) throw InputError("--targets: '" + name + "' is not a target of " + settings.description);
      picked.push_back(*t);
    }
    targets = picked;
  }
  if (settings.max_targets > 0 && static_cast<long>(targets.size()) > settings.max_targets)
    targets.resize(settings.max_targets);
  return targets;
}

std::string catalog_target_config(const CatalogTarget& t, const std::vector<std::string>& data_files,
                                  const std::vector<ConfigEntry>& shared) {
  double first = std::numeric_limits<double>::infinity(), last = -first, widest = 0;
  for (const CatalogFile& f : t.files)
    if (f.usable) {
      double lo = f.rows[0].rv, hi = lo;
      for (const CatalogRow& r : f.rows) {
        first = std::min(first, r.time);
        last = std::max(last, r.time);
        lo = std::min(lo, r.rv);
        hi = std::max(hi, r.rv);
      }
      widest = std::max(widest, hi - lo);
    }
  const double epoch = std::ceil(first) - 1, span = last - first;  // a whole day before the first RV
  std::ostringstream out;
  out << "# " << t.name << " (" << t.star << "): generated by swarmfit catalog from its catalog's RV files and planet "
      << "table\n";
  out << "star_mass = " << format(t.star_mass) << "\nstar_radius = 0\nreference_epoch = " << format(epoch)
      << "\nmass_parameter = K\n";
  // The catalog's defaults, unless the shared keys or the target's own set them.
  std::map<std::string, std::string> keys = {{"init", "guess"},       {"optimize", "200"},      {"ess_target", "400"},
                                             {"rhat_target", "1.01"}, {"generations", "20000"}, {"seed", "1"}};
  for (const ConfigEntry& e : shared) keys[e.key] = e.value;
  for (const ConfigEntry& e : t.overrides) keys[e.key] = e.value;
  for (const auto& [key, value] : keys) out << key << " = " << value << "\n";
  std::ostringstream priors;
  priors << "\n[priors]\nstar_mass = fixed\n";
  for (std::size_t k = 0; k < t.planets.size(); ++k) {
    const CatalogPlanet& p = t.planets[k];
    if (!p.fitted) continue;
    const std::string name = planet_name(p.letter, static_cast<int>(k));
    const double e = std::isfinite(p.e) ? std::min(std::max(p.e, 0.0), 0.7) : 0.0;
    // The table's omega is the star's (the RV papers' usual convention); the model's is the planet's.
    const double omega = (std::isfinite(p.omega_deg) ? p.omega_deg + 180.0 : 90.0) * kPi / 180.0;
    double tc = epoch + 0.5 * p.period;
    if (p.epoch_kind == "tc") {
      tc = p.epoch;
    } else if (p.epoch_kind == "tperi") {  // conjunction at true anomaly pi/2 - omega (elements.hpp)
      const double f = 0.5 * kPi - omega;
      const double E = 2 * std::atan(std::sqrt((1 - e) / (1 + e)) * std::tan(0.5 * f));
      tc = p.epoch + p.period * (E - e * std::sin(E)) / (2 * kPi);
    }
    tc -= p.period * std::floor((tc - epoch) / p.period);  // into [epoch, epoch + P)
    const double w = std::min(0.2, std::max(0.02, 5 * p.period / span));
    const double kmax = std::max(3 * p.K, 2 * widest);
    out << "\n[planet " << name << "]\nperiod = " << format(p.period) << "\nK = " << format(p.K)
        << "\nsecosw = " << format(std::sqrt(e) * std::cos(omega))
        << "\nsesinw = " << format(std::sqrt(e) * std::sin(omega)) << "\ntc = " << format(tc)
        << "\ninc = 90\nnode = 0\n";
    priors << "period_" << name << " = uniform(" << format(p.period * (1 - w)) << ", " << format(p.period * (1 + w))
           << ")\nK_" << name << " = uniform(0.1, " << format(kmax) << ")\nsecosw_" << name
           << " = uniform(-0.9, 0.9)\nsesinw_" << name << " = uniform(-0.9, 0.9)\ntc_" << name << " = uniform("
           << format(tc - 0.5 * p.period) << ", " << format(tc + 0.5 * p.period) << ")\ninc_" << name
           << " = fixed\nnode_" << name << " = fixed\n";
  }
  std::size_t d = 0;
  for (const CatalogFile& f : t.files) {
    if (!f.usable) continue;
    std::vector<double> rv;
    double lo = f.rows[0].rv, hi = lo;
    for (const CatalogRow& r : f.rows) {
      rv.push_back(r.rv);
      lo = std::min(lo, r.rv);
      hi = std::max(hi, r.rv);
    }
    const double middle = median(rv), reach = (hi - lo) + 2 * widest + 100;
    const double jitter_max = std::max(100.0, 3 * spread(f.rows));
    out << "\n[instrument " << f.label << "]\noffset = " << format(middle) << "\njitter = 1\n";
    out << "\n[rv " << f.label << "]\nfile = " << data_files.at(d++)
        << "\ncolumns = time rv rv_error\ninstrument = " << f.label << "\n";
    priors << "offset_" << f.label << " = uniform(" << format(middle - reach) << ", " << format(middle + reach)
           << ")\njitter_" << f.label << " = log_uniform(0.01, " << format(jitter_max) << ")\n";
  }
  return out.str() + priors.str();
}

std::vector<long> share_in_proportion(const std::vector<double>& weights, long total) {
  const std::size_t n = weights.size();
  std::vector<long> shares(n, 1);
  const long rest = total - static_cast<long>(n);
  if (n == 0 || rest <= 0) return shares;
  double sum = 0;
  for (const double w : weights) sum += std::max(0.0, w);
  std::vector<double> quota(n);
  long given = 0;
  for (std::size_t i = 0; i < n; ++i) {
    quota[i] = sum > 0 ? rest * std::max(0.0, weights[i]) / sum : static_cast<double>(rest) / n;
    const long whole = std::min(rest - given, static_cast<long>(std::floor(quota[i])));
    shares[i] += whole;
    given += whole;
    quota[i] -= static_cast<double>(whole);
  }
  // Hamilton's largest remainders: the units left go to the largest fractions (the first on ties).
  std::vector<std::size_t> by(n);
  std::iota(by.begin(), by.end(), std::size_t{0});
  std::stable_sort(by.begin(), by.end(), [&](std::size_t a, std::size_t b) { return quota[a] > quota[b]; });
  for (std::size_t j = 0; given < rest; j = (j + 1) % n, ++given) ++shares[by[j]];
  return shares;
}

CatalogOutcome run_catalog(const CatalogSettings& settings, const CatalogCallbacks& callbacks) {
  if (settings.jobs < 1 || settings.jobs > 1024) throw InputError("jobs (--jobs) must be 1 to 1024");
  if (settings.host_targets < 0 || settings.host_targets > 100000)
    throw InputError("host targets (--host-targets) must be 0 to 100000");
  if (settings.pack != "auto" && settings.pack != "on" && settings.pack != "off")
    throw InputError("pack (--pack) must be auto, on or off, not '" + settings.pack + "'");
  if (settings.jobs > 1) cuda_wait_blocking();  // before any CUDA work: the fits' threads share the card
  const auto set_up_start = std::chrono::steady_clock::now();
  CatalogOutcome outcome;
  outcome.targets = read_catalog(settings);
  auto say = [&](const std::string& line) {
    if (callbacks.message) callbacks.message(line);
  };
  const SectionedConfig description = read_sectioned_config(settings.description);
  std::vector<ConfigEntry> shared;
  for (const ConfigEntry& e : description.globals)
    if (e.key != "folder" && e.key != "planets" && e.key != "targets") shared.push_back(e);
  // A key no target can take stops the catalog before any work (a typo would otherwise skip every
  // target); a value one target refuses (too few walkers for its parameters) skips that target.
  boost::program_options::options_description known;
  known.add(model_keys()).add(fit_keys());
  auto check_key = [&](const std::string& key, const std::string& where) {
    if (known.find_nothrow(key, false)) return;
    const std::string close = closest_key(key, known);
    throw InputError(where + ": unknown key '" + key + "'" + (close.empty() ? "" : " (did you mean '" + close + "'?)"));
  };
  for (const ConfigEntry& e : shared) check_key(e.key, e.origin);
  for (const CatalogTarget& t : outcome.targets)
    for (const ConfigEntry& e : t.overrides) check_key(e.key, e.origin);
  {
    std::set<std::string> given;
    for (const std::string& o : settings.overrides) {
      check_key(o.substr(0, o.find('=')), "command line");
      if (!given.insert(o.substr(0, o.find('='))).second)
        throw InputError("command line: key '" + o.substr(0, o.find('=')) + "' given twice");
    }
  }
  if (settings.output.empty()) throw InputError("catalog: give --output DIR");
  std::error_code ec;
  // A catalog refused for its command line leaves no folder it made behind.
  const bool made_output = !fs::exists(settings.output);
  fs::create_directories(fs::path(settings.output) / "targets", ec);
  if (ec) throw InputError("--output " + settings.output + ": " + ec.message());

  // What writers killed in an earlier sitting left half-written (the primary, before anyone writes).
  if (settings.primary) h5::remove_stale_partials_under(settings.output);
  // Every target's configuration is written (by the primary) and loaded (checked) before any fit.
  std::vector<std::unique_ptr<ModelConfig>> configs(outcome.targets.size());
  std::vector<std::string> outputs(outcome.targets.size()), paths(outcome.targets.size());
  for (std::size_t k = 0; k < outcome.targets.size(); ++k) {
    CatalogTarget& t = outcome.targets[k];
    if (!t.skip.empty()) continue;
    const fs::path dir = fs::path(settings.output) / "targets" / t.name;
    outputs[k] = (dir / "run.h5").string();
    paths[k] = t.config.empty() ? (dir / "fit.cfg").string() : t.config;
    if (!settings.primary) continue;
    fs::create_directories(dir);  // a configured target's run file and result go here too
    if (!t.config.empty()) continue;
    std::vector<std::string> data_files;
    for (const CatalogFile& f : t.files) {
      if (!f.usable) continue;
      const std::string name = "rv_" + f.label + ".txt";
      std::string text = "# " + f.path + " as swarmfit catalog read and checked it: JD, m/s, m/s\n";
      for (const CatalogRow& r : f.rows) text += exact(r.time) + " " + exact(r.rv) + " " + exact(r.error) + "\n";
      write_text((dir / name).string(), text);
      data_files.push_back(name);
    }
    write_text(paths[k], catalog_target_config(t, data_files, shared));
  }
  if (settings.barrier) settings.barrier();
  std::vector<std::string> refusals(outcome.targets.size());  // of a command-line value
  std::vector<double> cost(outcome.targets.size(), 0.0);
  // Each target's configuration loaded and checked (its integration step settled by integrating it
  // at halved steps), on every core: one after another this took 38 s for the archive catalog, on
  // every rank, before any fit.
  auto check_target = [&](std::size_t k) {
    CatalogTarget& t = outcome.targets[k];
    if (!t.skip.empty()) return;
    std::vector<std::string> overrides;
    if (!t.config.empty()) {
      for (const ConfigEntry& e : shared) overrides.push_back(e.key + "=" + e.value);
      for (const ConfigEntry& e : t.overrides) overrides.push_back(e.key + "=" + e.value);
    }
    overrides.insert(overrides.end(), settings.overrides.begin(), settings.overrides.end());
    overrides.push_back("output=" + outputs[k]);
    overrides.push_back("progress=off");
    {  // the shared keys, the target's, the command line's, the catalog's own: the last one wins
      std::vector<std::string> kept;
      std::set<std::string> seen;
      for (auto it = overrides.rbegin(); it != overrides.rend(); ++it)
        if (seen.insert(it->substr(0, it->find('='))).second) kept.insert(kept.begin(), *it);
      overrides = kept;
    }
    try {
      configs[k] = std::make_unique<ModelConfig>(load_model_config(paths[k], overrides));
      read_fit_settings(*configs[k]);
      read_priors(*configs[k]);
      const ModelConfig& c = *configs[k];
      const LikelihoodProblem problem(c.data, *c.model, c.likelihood, c.values);  // the data against the model
      // Its cost: one system's integration, steps x bodies^2 (a launch lasts as long as its slowest
      // system, and a fit as long as its launches).
      const RunRequest r = problem.run_request();
      const double nb = c.model->num_bodies();
      cost[k] = (r.step.time_step > 0 ? r.destination_time / r.step.time_step : 1.0) * nb * nb;
      if (!t.config.empty()) {  // what its configuration holds, for the report and the summary
        t.star_mass = c.values[c.model->index("star_mass")];
        t.config_points = static_cast<long>(c.data.rv.size() + c.data.transits.size());
        for (const std::string& name : c.model->planets()) {
          CatalogPlanet p;
          p.letter = name;
          p.period = p.K = kNaN;
          t.planets.push_back(p);
        }
      }
    } catch (const InputError& e) {
      // A command-line value (an override, the same for every target) is the user's error, not
      // the target's: it stops the catalog before any work.
      if (std::string(e.what()).rfind("command line", 0) == 0) refusals[k] = e.what();
      configs[k].reset();
      t.skip = std::string("its configuration is refused: ") + e.what();
    }
  };
  {
    std::atomic<std::size_t> next_check{0};
    std::vector<std::exception_ptr> errors(outcome.targets.size());  // other than InputError: rethrown here
    auto checker = [&] {
      cuda_bind_thread();  // (the rank's GPU, should a check touch it)
      for (std::size_t k; (k = next_check++) < outcome.targets.size();) try {
          check_target(k);
        } catch (...) {
          errors[k] = std::current_exception();
        }
    };
    const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());  // this rank's share of them
    const std::size_t workers = std::min<std::size_t>(
        outcome.targets.size(), std::max<std::size_t>(1, cores / std::max(1, settings.local_ranks)));
    const std::size_t helpers = workers > 0 ? workers - 1 : 0;
    std::vector<std::thread> pool;
    for (std::size_t j = 0; j < helpers; ++j) pool.emplace_back(checker);
    checker();
    for (std::thread& t : pool) t.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  }
  long accepted = 0;
  const double total_cost = std::accumulate(cost.begin(), cost.end(), 0.0);  // the accepted targets'
  std::string command_line_refusal;                                          // the first in the catalog's order
  for (std::size_t k = 0; k < outcome.targets.size(); ++k) {
    accepted += configs[k] != nullptr;
    if (command_line_refusal.empty()) command_line_refusal = refusals[k];
  }
  // A command-line value no target accepts (walkers=-2, generations=abc) is the user's error: it
  // stops the catalog before any fit; one that only some targets refuse skips those.
  if (!command_line_refusal.empty() && accepted == 0) {
    if (made_output && settings.primary) fs::remove_all(settings.output, ec);
    throw InputError(command_line_refusal);
  }
  // Host targets (CatalogSettings::host_targets): the costliest GPU targets by one system's
  // integration, fitted on this process's CPU cores. Chosen before the costs of finished targets
  // are zeroed (below), so every sitting and rank count picks the same ones.
  std::vector<long> host;  // costliest first
  std::vector<char> on_host(outcome.targets.size(), 0);
  if (settings.host_targets > 0 && !settings.check_only) {
    for (std::size_t k = 0; k < outcome.targets.size(); ++k) {
      if (!configs[k] || !outcome.targets[k].skip.empty()) continue;
      const LikelihoodSettings& l = configs[k]->likelihood;
      // A thread per body already shortens such a target's chain on the GPU (likelihood.hpp).
      if (l.backend == "cuda" && !cuda_body_layout_possible(l, configs[k]->model->num_bodies()))
        host.push_back(static_cast<long>(k));
    }
    std::stable_sort(host.begin(), host.end(), [&](long a, long b) { return cost[a] > cost[b]; });
    if (static_cast<long>(host.size()) > settings.host_targets) host.resize(settings.host_targets);
    // This process's host targets share its cores (its affinity, e.g. under taskset, not the
    // machine's) in proportion to a batch's work, one system's integration times the batch's
    // systems, at least a core each, so that their chains end about together.
    std::vector<long> mine;
    std::vector<double> work;
    for (std::size_t i = 0; i < host.size(); ++i) {
      on_host[host[i]] = 1;
      if (static_cast<int>(i % settings.ranks) != settings.rank) continue;
      mine.push_back(host[i]);
      const FitSettings f = read_fit_settings(*configs[host[i]]);
      work.push_back(cost[host[i]] * f.walkers * static_cast<double>(f.sampler.temperatures.size()));
    }
    const long cores = std::max(1L, static_cast<long>(omp_get_num_procs()) / std::max(1, settings.local_ranks));
    // (--jobs 1: the targets run one at a time, each host target on all of them)
    const std::vector<long> threads =
        settings.jobs > 1 ? share_in_proportion(work, cores) : std::vector<long>(mine.size(), cores);
    std::string names;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      LikelihoodSettings& l = configs[mine[i]]->likelihood;
      l.backend = configs[mine[i]]->stability.options.backend = "cpu";
      l.threads = configs[mine[i]]->stability.options.threads = static_cast<int>(threads[i]);
      names += (names.empty() ? "" : ", ") + outcome.targets[mine[i]].name + " (" + std::to_string(threads[i]) + ")";
    }
    if (!mine.empty()) say("fitted on the host's CPU cores (threads): " + names);
  }
  // Packing: a packer per backend, shared by the targets' likelihood problems; each fit holds a
  // seat while it runs (below), so that a round of launches waits for every running fit's batch.
  std::map<std::string, std::shared_ptr<LaunchPacker>> packers;
  for (std::size_t k = 0; k < outcome.targets.size(); ++k) {
    if (!configs[k] || !outcome.targets[k].skip.empty() || on_host[k]) continue;
    LikelihoodSettings& l = configs[k]->likelihood;
    const bool packable = l.backend == "cpu" || !l.reproducible;
    const bool wanted = settings.pack == "on" || (settings.pack == "auto" && settings.jobs > 1 && l.backend == "cuda");
    // ephemeris = mean: two dependent integrations a likelihood, never packed (likelihood.hpp),
    // so such a fit takes no seat (a seat no batch fills would hold every round to pack_wait).
    const boost::program_options::variables_map& vm = configs[k]->vm;
    const bool mean = vm.count("ephemeris") && vm["ephemeris"].as<std::string>() == "mean";
    // A target whose batches may run a thread per body on the GPU (55 Cnc's six bodies) keeps its
    // own launches, as it would alone (likelihood.hpp, cuda_body_layout_possible), and no seat.
    const bool own = l.backend == "cuda" && cuda_body_layout_possible(l, configs[k]->model->num_bodies());
    if (!packable || !wanted || mean || own) continue;
    std::shared_ptr<LaunchPacker>& packer = packers[l.backend];
    // On the GPU a round's launches run at once, each on its stream: fast targets need not wait for slow ones.
    if (!packer) packer = std::make_shared<LaunchPacker>(settings.pack_wait, l.backend == "cuda");
    l.packer = packer;
    l.packing_label = outcome.targets[k].name;
  }
  if (settings.primary) write_text((fs::path(settings.output) / "report.txt").string(), report_text(outcome.targets));
  if (settings.check_only) {
    char line[120];
    std::snprintf(line, sizeof line, "a likelihood of every target: %.4g steps x bodies^2", total_cost);
    say(line);
    for (const CatalogTarget& t : outcome.targets) outcome.skipped += !t.skip.empty();
    return outcome;
  }

  auto result_file = [&](std::size_t k) { return (fs::path(outputs[k]).parent_path() / "result.csv").string(); };
  // A target's summary rows and what became of it: skipped, kept from an earlier run, fitted now,
  // failed, or interrupted. Safe to run for several targets at once (threads: --jobs).
  enum class Done { kSkipped, kKept, kFitted, kFailed, kInterrupted };
  // Each fit's time and where it went (the closing lines name the longest: what bounds a catalog).
  struct FitTime {
    std::string name;
    double seconds;
    FitTiming timing;
    bool packed;
  };
  std::vector<FitTime> fit_times;
  std::mutex fit_times_mutex;
  auto process = [&](std::size_t k, std::vector<CatalogResult>& rows) {
    const CatalogTarget& t = outcome.targets[k];
    if (!t.skip.empty()) {
      rows = target_results(t, "skipped: " + t.skip, {});
      return Done::kSkipped;
    }
    if (fs::exists(result_file(k))) {
      rows = read_results(result_file(k));
      return Done::kKept;
    }
    FitSettings s = read_fit_settings(*configs[k]);
    s.resume = true;
    // A run file left by a fit of another configuration (the catalog's rules or keys changed since):
    // that fit cannot be continued, so the target starts again.
    if (fs::exists(s.output) && read_run_config(s.output) != configs[k]->file.text) {
      fs::remove(s.output);
      say(t.name + ": its configuration changed since its run file was written: fitted again from the start");
    }
    FitCallbacks fc;
    fc.should_stop = callbacks.should_stop;
    const auto started = std::chrono::steady_clock::now();
    std::string status;
    FitResult r;
    try {
      std::optional<LaunchPacker::Seat> seat;
      if (configs[k]->likelihood.packer) seat.emplace(*configs[k]->likelihood.packer);
      r = run_fit(*configs[k], s, fc);
      status = r.converged ? "converged" : "not converged";
    } catch (const std::exception& e) {
      status = std::string("failed: ") + e.what();
    }
    if (r.interrupted) {
      say("interrupted in " + t.name + " (generation " + std::to_string(r.generation) + ")");
      return Done::kInterrupted;
    }
    rows = target_results(t, status, r.summary);
    double best = -std::numeric_limits<double>::infinity();
    for (long d = r.first_draw; d < r.run.chain.num_draws(); ++d)
      for (int w = 0; w < r.run.chain.num_walkers; ++w)
        best = std::max(best, r.run.chain.log_likelihood[d * r.run.chain.num_walkers + w]);
    double worst_rhat = 0, min_ess = std::numeric_limits<double>::infinity();
    for (const SummaryRow& row : r.summary)
      if (!row.derived) {
        worst_rhat = std::max(worst_rhat, row.rhat);
        min_ess = std::min(min_ess, row.ess_bulk);
      }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    {
      const std::lock_guard<std::mutex> lock(fit_times_mutex);
      fit_times.push_back({t.name, seconds, r.timing, configs[k]->likelihood.packer != nullptr});
    }
    for (CatalogResult& row : rows) {
      row.generations = r.generation;
      row.seconds = seconds;
      row.worst_rhat = r.summary.empty() ? kNaN : worst_rhat;
      row.min_ess = r.summary.empty() ? kNaN : min_ess;
      row.max_log_likelihood = best;
    }
    std::string csv = result_header();
    for (const CatalogResult& row : rows) csv += result_line(row);
    write_text(result_file(k), csv);
    return status.rfind("failed", 0) == 0 ? Done::kFailed : Done::kFitted;
  };

  const auto catalog_start = std::chrono::steady_clock::now();
  const long total = static_cast<long>(outcome.targets.size());
  // Costliest first (longest processing time first, Graham 1969: a long target started last would
  // set the catalog's wall; the fits do not depend on their order). Done and skipped ones cost 0.
  for (long k = 0; k < total; ++k)
    if (!outcome.targets[k].skip.empty() || fs::exists(result_file(k))) cost[k] = 0;
  std::vector<long> order;
  for (long k = 0; k < total; ++k)
    if (!on_host[k]) order.push_back(k);
  std::stable_sort(order.begin(), order.end(), [&](long a, long b) { return cost[a] > cost[b]; });
  // This process's host targets go first, outside the queue and the shares: the i-th to rank i % ranks.
  std::vector<long> first;
  for (std::size_t i = 0; i < host.size(); ++i)
    if (static_cast<int>(i % settings.ranks) == settings.rank) first.push_back(host[i]);
  // Packed over ranks, each rank's share is fixed, each target going to the least loaded rank in
  // that order (Graham's list scheduling): the rank's targets then share its launches from the
  // start, where a queue would hand the first rank to ask as many as it has threads.
  const bool shared_out = !packers.empty() && settings.ranks > 1;
  if (shared_out) {
    std::vector<double> load(settings.ranks, 0.0);
    std::vector<long> mine;
    for (const long k : order) {
      const long r = std::min_element(load.begin(), load.end()) - load.begin();
      load[r] += std::max(cost[k], 1.0);
      if (r == settings.rank) mine.push_back(k);
    }
    order = mine;
  }
  // Every rank's order (and share) comes from the same costs only if no rank has written a result
  // (which zeroes a target's cost above) before the slowest has read them: 4 ranks whose set-up
  // took 42-47 s left a target to none. (The queue hands out positions in the order: the same.)
  if (settings.barrier) settings.barrier();
  std::mutex mutex;  // the queue, the counters and the messages
  long next = 0;
  long handed = 0;  // order[0, handed) handed out, by this process or (the queue) another
  bool exhausted = false;
  // The next target to fit: the next in order, or (MPI, not packed) the queue's; once none is
  // left, this process's other threads stop asking.
  std::size_t next_first = 0;
  auto take = [&]() -> long {
    if (outcome.interrupted) return -1;
    if (next_first < first.size()) return first[next_first++];
    if (exhausted) return -1;
    const long n = static_cast<long>(order.size());
    const long i = settings.next_target && !shared_out ? settings.next_target(n) : next < n ? next++ : -1;
    exhausted = i < 0;
    if (i < 0) return -1;
    handed = std::max(handed, i + 1);
    return order[i];
  };
  auto work = [&] {
    cuda_bind_thread();  // this rank's GPU (a new thread starts on device 0)
    for (;;) {
      long k;
      {
        const std::lock_guard<std::mutex> lock(mutex);
        k = take();
      }
      if (k < 0) return;
      std::vector<CatalogResult> rows;
      const Done d = process(k, rows);
      const std::lock_guard<std::mutex> lock(mutex);
      if (d == Done::kInterrupted) {
        outcome.interrupted = true;
        return;
      }
      ++(d == Done::kSkipped  ? outcome.skipped
         : d == Done::kKept   ? outcome.reused
         : d == Done::kFitted ? outcome.fitted
                              : outcome.failed);
      // ETA from the targets fitted in this sitting, over the targets not yet handed out.
      long left = 0;
      for (long i = handed; i < static_cast<long>(order.size()); ++i)
        left += outcome.targets[order[i]].skip.empty() && !fs::exists(result_file(order[i]));
      for (std::size_t i = next_first; i < first.size(); ++i) left += !fs::exists(result_file(first[i]));
      const long fitted_now = outcome.fitted + outcome.failed;
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - catalog_start).count();
      char line[400];
      std::snprintf(line, sizeof line,
                    "[%ld/%ld] %s: %s; %ld fitted, %ld kept, %ld skipped, %ld failed, %ld to fit (about %.0f s left)",
                    k + 1, total, outcome.targets[k].name.c_str(), rows.empty() ? "" : rows[0].status.c_str(),
                    outcome.fitted, outcome.reused, outcome.skipped, outcome.failed, left,
                    fitted_now ? seconds / fitted_now * left / std::max(1, settings.jobs) : 0.0);
      say(line);
    }
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < settings.jobs; ++j) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  for (const auto& [backend, packer] : packers) {
    const PackingStats p = packer->stats();
    outcome.packing.launches += p.launches;
    outcome.packing.rounds += p.rounds;
    outcome.packing.waited += p.waited;
    outcome.packing.batches += p.batches;
    outcome.packing.systems += p.systems;
    outcome.packing.seconds += p.seconds;
  }
  {
    const double set_up = std::chrono::duration<double>(catalog_start - set_up_start).count();
    const double fits = std::chrono::duration<double>(std::chrono::steady_clock::now() - catalog_start).count();
    char line[200];
    std::snprintf(line, sizeof line,
                  "time: set-up %.1f s (reading, checks, integration steps), fits %.1f s; a likelihood of every "
                  "target: %.4g steps x bodies^2",
                  set_up, fits, total_cost);
    say(line);
  }
  if (outcome.packing.rounds > 0) {
    char line[300];
    std::snprintf(line, sizeof line,
                  "packing: %ld batches of the targets in %ld rounds (%.1f batches a round; %ld rounds formed after "
                  "waiting %.0f ms for a busy fit), %ld launches, %.1f s",
                  outcome.packing.batches, outcome.packing.rounds,
                  double(outcome.packing.batches) / outcome.packing.rounds, outcome.packing.waited,
                  1e3 * packers.begin()->second->max_wait(), outcome.packing.launches, outcome.packing.seconds);
    say(line);
    // The targets longest in the packer, where their time went: waiting for their launches, or in
    // launches (as long as each launch's slowest system). The longest bounds the catalog.
    std::vector<std::pair<std::string, PackedTime>> times;
    for (const auto& entry : packers)
      for (const auto& [name, t] : entry.second->times()) times.emplace_back(name, t);
    std::sort(times.begin(), times.end(), [](const auto& a, const auto& b) {
      return a.second.waiting + a.second.launched > b.second.waiting + b.second.launched;
    });
    std::string longest = "packing, the longest targets:";
    for (std::size_t k = 0; k < std::min<std::size_t>(times.size(), 5); ++k) {
      char part[300];
      const PackedTime& t = times[k].second;
      std::snprintf(
          part, sizeof part,
          "%s %s %ld batches, %.1f s waiting, %.1f s in launches (staging and copies back %.1f s, uploads and "
          "set-up %.1f s, kernels %.1f s, the rest %.1f s)",
          k ? ";" : "", times[k].first.c_str(), t.batches, t.waiting, t.launched, t.host, t.setup, t.kernels,
          std::max(0.0, t.launched - t.host - t.setup - t.kernels));
      longest += part;
    }
    say(longest);
  }
  if (!fit_times.empty()) {
    // The longest fits and where their time went: a fit with its own launches (not packed) shows
    // here whether its kernels or its waits make it long.
    std::sort(fit_times.begin(), fit_times.end(),
              [](const FitTime& a, const FitTime& b) { return a.seconds > b.seconds; });
    std::string longest = "fits, the longest:";
    for (std::size_t k = 0; k < std::min<std::size_t>(fit_times.size(), 5); ++k) {
      const FitTime& f = fit_times[k];
      char part[300];
      std::snprintf(part, sizeof part,
                    "%s %s %.1f s (%s; start %.1f s, sampling %.1f s: likelihoods %.1f s, GPU kernels %.1f s, device "
                    "total %.1f s)",
                    k ? ";" : "", f.name.c_str(), f.seconds, f.packed ? "packed" : "not packed", f.timing.start,
                    f.timing.sampling, f.timing.likelihood, f.timing.gpu_kernels, f.timing.gpu_device);
      longest += part;
    }
    say(longest);
  }
  if (outcome.interrupted) return outcome;  // (under MPI the launcher stops the other ranks)
  if (settings.barrier) settings.barrier();
  {  // the summary in the catalog's order, from every target's files, whoever fitted it
    outcome.results.clear();
    for (long k = 0; k < total; ++k) {
      std::vector<CatalogResult> rows;
      const CatalogTarget& t = outcome.targets[k];
      if (!t.skip.empty())
        rows = target_results(t, "skipped: " + t.skip, {});
      else
        rows = read_results(result_file(k));
      outcome.results.insert(outcome.results.end(), rows.begin(), rows.end());
    }
  }
  if (settings.primary) write_summary(settings.output, outcome.results);
  return outcome;
}

}  // namespace swarmfit
