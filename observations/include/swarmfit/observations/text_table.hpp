// Text tables: delimited files through libcsv, whitespace-separated files by a plain splitter,
// each row with the physical line it came from so that every error can name it.
#pragma once

#include <fstream>
#include <string>
#include <vector>

namespace swarmfit {

struct TableRow {
  int line;
  std::vector<std::string> fields;
};

// Reads every row of a comma-separated (or `delimiter`-separated) file through libcsv, blank rows
// included as empty rows; throws InputError("FILE:LINE: ...") on malformed CSV.
std::vector<TableRow> read_csv(const std::string& path, char delimiter = ',');

// How a data table is laid out (the declarative part of a data source description).
struct TableFormat {
  bool whitespace = true;                     // fields separated by runs of blanks and tabs
  char delimiter = ',';                       // otherwise this character (libcsv)
  std::vector<std::string> comments = {"#"};  // a line whose first non-blank text starts so is skipped
  int skip_lines = 0;                         // physical lines skipped at the top (titles, preambles)
  int footer_lines = 0;                       // non-blank lines dropped at the end (table notes)
  bool header = false;                        // the first row left after skipping is a header
};

// Reads a data table: skips the preamble, comments, blank lines, header and footer. Every row is
// returned with its physical line number. A NUL byte anywhere, or header = yes where the first
// row is numbers, is an InputError naming the line.
std::vector<TableRow> read_table(const std::string& path, const TableFormat& format);

// Opens a text file for reading; InputError naming the path for a folder ("is a folder, not
// WHAT") or an unreadable file (`unreadable`).
void open_text_file(std::ifstream& in, const std::string& path, const char* what,
                    const char* unreadable = "cannot open the file");
// A NUL byte would end a field early where C strings are read (a number cut short and taken): a
// text file has none, so one names a binary or damaged file (InputError "PATH:LINE: column C").
void refuse_nul_bytes(const std::string& line, const std::string& path, int number);

// Parses a whole field as a finite double; throws InputError naming file, line and column.
double parse_number(const std::string& text, const std::string& path, int line, const std::string& column);

}  // namespace swarmfit
