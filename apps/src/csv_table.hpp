// A CSV file read through libcsv, each row with the line number it ends on.
#pragma once

#include <string>
#include <vector>

namespace swarmfit::app {

struct CsvRow {
  int line;
  std::vector<std::string> fields;
};

// Reads every non-empty row; throws InputError("FILE:LINE: ...") on unreadable or malformed CSV.
std::vector<CsvRow> read_csv(const std::string& path);

// Parses a whole field as a finite double; throws InputError naming file, line and column.
double parse_number(const std::string& text, const std::string& path, int line, const std::string& column);

}  // namespace swarmfit::app
