#include "swarmfit/observations/text_table.hpp"

#include <csv.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "swarmfit/observations/input_error.hpp"

namespace swarmfit {

namespace {

struct Collector {
  std::vector<TableRow> rows;
  std::vector<std::string> current;
  int line = 0;
};

void on_field(void* data, std::size_t length, void* sink) {
  auto* c = static_cast<Collector*>(sink);
  c->current.emplace_back(data ? static_cast<const char*>(data) : "", data ? length : 0);
}

void on_row(int, void* sink) {
  auto* c = static_cast<Collector*>(sink);
  c->rows.push_back(TableRow{c->line, std::move(c->current)});
  c->current.clear();
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

// Feeds `text` (whole lines, each ending in '\n') to libcsv; rows carry `first_line` onwards.
std::vector<TableRow> parse_csv_lines(const std::vector<std::pair<int, std::string>>& lines, const std::string& path,
                                      char delimiter) {
  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
    throw InputError(path + ": cannot start the CSV parser");
  csv_set_delim(&parser, static_cast<unsigned char>(delimiter));
  Collector collector;
  for (const auto& [number, text] : lines) {
    collector.line = number;
    const std::string line = text + '\n';
    if (csv_parse(&parser, line.data(), line.size(), on_field, on_row, &collector) != line.size()) {
      const std::string why = csv_strerror(csv_error(&parser));
      csv_free(&parser);
      throw InputError(path + ":" + std::to_string(number) + ": malformed CSV (" + why + ")");
    }
  }
  if (csv_fini(&parser, on_field, on_row, &collector) != 0) {
    csv_free(&parser);
    throw InputError(path + ":" + std::to_string(collector.line) + ": malformed CSV (unterminated quoted field)");
  }
  csv_free(&parser);
  return std::move(collector.rows);
}

}  // namespace

void open_text_file(std::ifstream& in, const std::string& path, const char* what, const char* unreadable) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw InputError(path + ": is a folder, not " + what);
  in.open(path, std::ios::binary);
  if (!in) throw InputError(path + ": " + unreadable);
}

void refuse_nul_bytes(const std::string& line, const std::string& path, int number) {
  const auto nul = line.find('\0');
  if (nul != std::string::npos)
    throw InputError(path + ":" + std::to_string(number) + ": column " + std::to_string(nul + 1) +
                     ": a NUL byte (not a text file, or a damaged one)");
}

std::vector<TableRow> read_csv(const std::string& path, char delimiter) {
  std::ifstream in;
  open_text_file(in, path, "a CSV file");
  std::vector<std::pair<int, std::string>> lines;
  std::string line;
  int number = 0;
  // One physical line per call, so a row knows the line it ends on.
  while (std::getline(in, line)) {
    refuse_nul_bytes(line, path, ++number);
    lines.emplace_back(number, line);
  }
  std::vector<TableRow> rows = parse_csv_lines(lines, path, delimiter);
  // A blank line is a row with one empty field: drop it.
  std::vector<TableRow> kept;
  for (auto& row : rows)
    if (!(row.fields.size() == 1 && trim(row.fields[0]).empty())) kept.push_back(std::move(row));
  return kept;
}

std::vector<TableRow> read_table(const std::string& path, const TableFormat& format) {
  std::ifstream in;
  open_text_file(in, path, "a data file");
  std::vector<std::pair<int, std::string>> lines;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    refuse_nul_bytes(line, path, ++number);
    if (number <= format.skip_lines) continue;
    const std::string text = trim(line);
    if (text.empty()) continue;
    bool comment = false;
    for (const std::string& marker : format.comments)
      if (!marker.empty() && text.compare(0, marker.size(), marker) == 0) comment = true;
    if (comment) continue;
    lines.emplace_back(number, line);
  }
  for (int k = 0; k < format.footer_lines && !lines.empty(); ++k) lines.pop_back();
  const int header_line = format.header && !lines.empty() ? lines.front().first : 0;
  std::string header_text;
  if (format.header && !lines.empty()) {
    header_text = lines.front().second;
    lines.erase(lines.begin());
  }

  std::vector<TableRow> rows;
  if (format.whitespace) {
    for (const auto& [row_line, line_text] : lines) {
      TableRow row{row_line, {}};
      // An inline '#' comment ends the row ("2456496.673 882 20.221 #chip1 used", as published);
      // other comment markers ('-', '|') only mark whole lines (a '-' is also a sign).
      std::string text = line_text;
      if (std::find(format.comments.begin(), format.comments.end(), "#") != format.comments.end())
        text = text.substr(0, text.find('#'));
      std::istringstream fields(text);
      std::string field;
      while (fields >> field) row.fields.push_back(field);
      rows.push_back(std::move(row));
    }
  } else {
    rows = parse_csv_lines(lines, path, format.delimiter);
    for (auto& row : rows)
      for (auto& field : row.fields) field = trim(field);
  }
  // header = yes on a file without one would silently drop its first point: a header has a
  // field that is not a number.
  if (header_line > 0) {
    std::vector<std::string> fields;
    if (format.whitespace && std::find(format.comments.begin(), format.comments.end(), "#") != format.comments.end())
      header_text = header_text.substr(0, header_text.find('#'));
    std::istringstream split(header_text);
    std::string field;
    if (format.whitespace) {
      while (split >> field) fields.push_back(field);
    } else {
      while (std::getline(split, field, format.delimiter)) fields.push_back(trim(field));
    }
    bool numeric = !fields.empty();
    for (const std::string& f : fields) {
      char* end = nullptr;
      std::strtod(f.c_str(), &end);
      numeric = numeric && !f.empty() && end == f.c_str() + f.size();
    }
    if (numeric)
      throw InputError(path + ":" + std::to_string(header_line) +
                       ": header = yes, but this line is numbers, not column names (a data point would be lost)");
  }
  return rows;
}

double parse_number(const std::string& text, const std::string& path, int line, const std::string& column) {
  const std::string where = path + ":" + std::to_string(line) + ": column '" + column + "': ";
  if (text.empty()) throw InputError(where + "empty field");
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  while (end && (*end == ' ' || *end == '\t' || *end == '\r')) ++end;
  if (end == text.c_str() || end != text.c_str() + text.size())
    throw InputError(where + "not a number: '" + text + "'");
  if (!std::isfinite(value) || errno == ERANGE) throw InputError(where + "not a finite number: '" + text + "'");
  return value;
}

}  // namespace swarmfit
