#include "initial_conditions.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "errors.hpp"
#include "swarmfit/observations/text_table.hpp"

namespace swarmfit::app {

std::unique_ptr<Ensemble> read_initial_conditions(const std::string& path) {
  const std::vector<TableRow> rows = read_csv(path);
  if (rows.empty()) throw InputError(path + ": empty file (expected a header and one row per body)");
  const std::vector<std::string> required = {"system", "body", "mass", "x", "y", "z", "vx", "vy", "vz"};
  std::map<std::string, std::size_t> column;
  const std::string header = path + ":" + std::to_string(rows[0].line) + ": ";
  for (std::size_t k = 0; k < rows[0].fields.size(); ++k) {
    const std::string& name = rows[0].fields[k];
    static const std::vector<std::string> known = {"system", "body", "mass", "x",      "y",    "z",
                                                   "vx",     "vy",   "vz",   "radius", "time", "status"};
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw InputError(header + "unknown column '" + name +
                       "' (known: system, body, mass, x, y, z, vx, vy, vz, radius, time, status)");
    if (!column.emplace(name, k).second) throw InputError(header + "column '" + name + "' given twice");
  }
  for (const auto& name : required) {
    if (!column.count(name))
      throw InputError(path + ":" + std::to_string(rows[0].line) + ": header lacks column '" + name + "'");
  }
  if (rows.size() < 2) throw InputError(path + ": no bodies after the header");

  struct Body {
    double mass, radius, time, x[3], v[3];
    int line;
  };
  std::map<long, std::map<int, Body>> systems;
  const char* axes[3] = {"x", "y", "z"};
  const char* vaxes[3] = {"vx", "vy", "vz"};
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const TableRow& row = rows[r];
    if (row.fields.size() != rows[0].fields.size())
      throw InputError(path + ":" + std::to_string(row.line) + ": expected " + std::to_string(rows[0].fields.size()) +
                       " fields, found " + std::to_string(row.fields.size()));
    auto number = [&](const std::string& name) { return parse_number(row.fields[column[name]], path, row.line, name); };
    auto integer = [&](const std::string& name) {
      const double v = number(name);
      if (v != std::floor(v) || v < 0 || v > 1e15)
        throw InputError(path + ":" + std::to_string(row.line) + ": column '" + name + "': not a non-negative integer");
      return static_cast<long>(v);
    };
    Body b{};
    b.line = row.line;
    const long sys = integer("system");
    const int body = static_cast<int>(integer("body"));
    b.mass = number("mass");
    if (b.mass < 0) throw InputError(path + ":" + std::to_string(row.line) + ": column 'mass': negative mass");
    for (int d = 0; d < 3; ++d) {
      b.x[d] = number(axes[d]);
      b.v[d] = number(vaxes[d]);
    }
    b.radius = column.count("radius") ? number("radius") : 0.0;
    if (b.radius < 0) throw InputError(path + ":" + std::to_string(row.line) + ": column 'radius': negative radius");
    b.time = column.count("time") ? number("time") : 0.0;
    if (systems[sys].count(body))
      throw InputError(path + ":" + std::to_string(row.line) + ": system " + std::to_string(sys) + " body " +
                       std::to_string(body) + " given twice");
    systems[sys][body] = b;
  }
  // Systems must be numbered 0..M-1, each with bodies 0..n-1, all with the same n.
  const int n = static_cast<int>(systems.begin()->second.size());
  long expected = 0;
  for (const auto& [sys, bodies] : systems) {
    const int first_line = bodies.begin()->second.line;
    const std::string where = path + ":" + std::to_string(first_line) + ": system " + std::to_string(sys);
    if (sys != expected)
      throw InputError(where + ": systems must be numbered 0, 1, 2, ... (missing " + std::to_string(expected) + ")");
    ++expected;
    if (static_cast<int>(bodies.size()) < kMinBodies) throw InputError(where + ": fewer than 2 bodies");
    if (static_cast<int>(bodies.size()) > kMaxBodies) throw InputError(where + ": more than 16 bodies");
    if (static_cast<int>(bodies.size()) != n)
      throw InputError(where + ": has " + std::to_string(bodies.size()) + " bodies, system 0 has " + std::to_string(n));
    if (bodies.rbegin()->first != n - 1)
      throw InputError(where + ": bodies must be numbered 0.." + std::to_string(n - 1));
    if (!(bodies.at(0).mass > 0))
      throw InputError(path + ":" + std::to_string(bodies.at(0).line) +
                       ": column 'mass': body 0 (the star) needs a positive mass");
    for (const auto& [index, b] : bodies) {
      if (b.time != bodies.at(0).time)
        throw InputError(path + ":" + std::to_string(b.line) + ": column 'time': differs within system " +
                         std::to_string(sys));
    }
  }
  auto e = std::make_unique<Ensemble>(static_cast<long>(systems.size()), n);
  for (const auto& [sys, bodies] : systems) {
    for (const auto& [index, b] : bodies) {
      e->mass(sys, index) = b.mass;
      e->radius(sys, index) = b.radius;
      for (int d = 0; d < 3; ++d) {
        e->position(sys, index, d) = b.x[d];
        e->velocity(sys, index, d) = b.v[d];
      }
    }
    e->set_time(sys, bodies.at(0).time);
  }
  return e;
}

}  // namespace swarmfit::app
