#include "csv_table.hpp"

#include <csv.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "errors.hpp"

namespace swarmfit::app {

namespace {

struct Collector {
  std::vector<CsvRow> rows;
  std::vector<std::string> current;
  int line = 0;
};

void on_field(void* data, std::size_t length, void* sink) {
  auto* c = static_cast<Collector*>(sink);
  c->current.emplace_back(data ? static_cast<const char*>(data) : "", data ? length : 0);
}

void on_row(int, void* sink) {
  auto* c = static_cast<Collector*>(sink);
  c->rows.push_back(CsvRow{c->line, std::move(c->current)});
  c->current.clear();
}

}  // namespace

std::vector<CsvRow> read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the file");
  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
    throw InputError(path + ": cannot start the CSV parser");
  Collector collector;
  std::string line;
  // One physical line per call, so a row knows the line it ends on.
  while (std::getline(in, line)) {
    ++collector.line;
    line += '\n';
    if (csv_parse(&parser, line.data(), line.size(), on_field, on_row, &collector) != line.size()) {
      const std::string why = csv_strerror(csv_error(&parser));
      csv_free(&parser);
      throw InputError(path + ":" + std::to_string(collector.line) + ": malformed CSV (" + why + ")");
    }
  }
  if (csv_fini(&parser, on_field, on_row, &collector) != 0) {
    csv_free(&parser);
    throw InputError(path + ":" + std::to_string(collector.line) + ": malformed CSV (unterminated quoted field)");
  }
  csv_free(&parser);
  return collector.rows;
}

double parse_number(const std::string& text, const std::string& path, int line, const std::string& column) {
  const std::string where = path + ":" + std::to_string(line) + ": column '" + column + "': ";
  if (text.empty()) throw InputError(where + "empty field");
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  while (end && (*end == ' ' || *end == '\t' || *end == '\r')) ++end;
  if (end == text.c_str() || *end != '\0') throw InputError(where + "not a number: '" + text + "'");
  if (!std::isfinite(value) || errno == ERANGE) throw InputError(where + "not a finite number: '" + text + "'");
  return value;
}

}  // namespace swarmfit::app
