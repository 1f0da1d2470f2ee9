#include "swarmfit/inference/prior.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace swarmfit {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLogSqrt2Pi = 0.91893853320467274178;

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// Inverse of the standard normal CDF (Acklam's rational approximation, |rel. error| < 1.2e-9,
// then one Halley step on erfc, which brings it to round-off).
double normal_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p > 1 - 0.02425) {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  const double e = normal_cdf(x) - p;
  const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

std::vector<double> parse_arguments(const std::string& text, std::size_t open, const std::string& name) {
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos || close < open) throw std::invalid_argument("prior '" + text + "': missing ')'");
  for (std::size_t k = close + 1; k < text.size(); ++k)
    if (!std::isspace(static_cast<unsigned char>(text[k])))
      throw std::invalid_argument("prior '" + text + "': text after ')'");
  std::vector<double> out;
  std::string inner = text.substr(open + 1, close - open - 1);
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = inner.find(',', start);
    std::string field = inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t first = field.find_first_not_of(" \t"), last = field.find_last_not_of(" \t");
    field = first == std::string::npos ? "" : field.substr(first, last - first + 1);
    if (field.empty() && comma == std::string::npos && out.empty()) break;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(field.c_str(), &end);
    if (field.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
      throw std::invalid_argument("prior '" + text + "': " + name + " argument '" + field + "' is not a finite number");
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

Prior parse_prior(const std::string& raw) {
  const std::size_t first = raw.find_first_not_of(" \t"), last = raw.find_last_not_of(" \t");
  const std::string text = first == std::string::npos ? "" : raw.substr(first, last - first + 1);
  const std::size_t open = text.find('(');
  std::string name = text.substr(0, open);
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  Prior p;
  if (name == "fixed") {
    p.kind = PriorKind::kFixed;
    if (open != std::string::npos) {
      const std::vector<double> v = parse_arguments(text, open, name);
      if (v.size() != 1) throw std::invalid_argument("prior '" + text + "': fixed takes one value, fixed(v)");
      p.value = v[0];
      p.has_value = true;
    }
    return p;
  }
  const struct {
    const char* name;
    PriorKind kind;
    std::size_t arguments;
  } kinds[] = {{"uniform", PriorKind::kUniform, 2},
               {"log_uniform", PriorKind::kLogUniform, 2},
               {"normal", PriorKind::kNormal, 2},
               {"truncated_normal", PriorKind::kTruncatedNormal, 4}};
  for (const auto& k : kinds) {
    if (name != k.name) continue;
    if (open == std::string::npos) throw std::invalid_argument("prior '" + text + "': expected " + name + "(...)");
    const std::vector<double> v = parse_arguments(text, open, name);
    if (v.size() != k.arguments)
      throw std::invalid_argument("prior '" + text + "': " + name + " takes " + std::to_string(k.arguments) +
                                  " arguments, found " + std::to_string(v.size()));
    p.kind = k.kind;
    p.a = v[0];
    p.b = v[1];
    switch (k.kind) {
      case PriorKind::kUniform:
        if (!(v[0] < v[1])) throw std::invalid_argument("prior '" + text + "': needs a < b");
        p.lower = v[0], p.upper = v[1];
        break;
      case PriorKind::kLogUniform:
        if (!(v[0] > 0 && v[0] < v[1])) throw std::invalid_argument("prior '" + text + "': needs 0 < a < b");
        p.lower = v[0], p.upper = v[1];
        break;
      case PriorKind::kNormal:
        if (!(v[1] > 0)) throw std::invalid_argument("prior '" + text + "': needs sigma > 0");
        p.lower = -kInf, p.upper = kInf;
        break;
      case PriorKind::kTruncatedNormal:
        if (!(v[1] > 0)) throw std::invalid_argument("prior '" + text + "': needs sigma > 0");
        if (!(v[2] < v[3])) throw std::invalid_argument("prior '" + text + "': needs lower < upper");
        p.lower = v[2], p.upper = v[3];
        if (!(normal_cdf((v[3] - v[0]) / v[1]) - normal_cdf((v[2] - v[0]) / v[1]) > 1e-300))
          throw std::invalid_argument("prior '" + text + "': no probability between the bounds");
        break;
      case PriorKind::kFixed: break;
    }
    return p;
  }
  throw std::invalid_argument("prior '" + text +
                              "': unknown distribution (known: uniform, log_uniform, normal, truncated_normal, fixed)");
}

double Prior::log_density(double x) const {
  if (!(x >= lower && x <= upper)) return -kInf;  // NaN too
  switch (kind) {
    case PriorKind::kUniform: return -std::log(b - a);
    case PriorKind::kLogUniform: return -std::log(x) - std::log(std::log(b / a));
    case PriorKind::kNormal: {
      const double z = (x - a) / b;
      return -0.5 * z * z - std::log(b) - kLogSqrt2Pi;
    }
    case PriorKind::kTruncatedNormal: {
      const double z = (x - a) / b;
      const double mass = normal_cdf((upper - a) / b) - normal_cdf((lower - a) / b);
      return -0.5 * z * z - std::log(b) - kLogSqrt2Pi - std::log(mass);
    }
    case PriorKind::kFixed: return 0.0;
  }
  return -kInf;
}

double Prior::sample(double u1, double u2) const {
  switch (kind) {
    case PriorKind::kUniform: return a + (b - a) * u1;
    case PriorKind::kLogUniform: return a * std::exp(u1 * std::log(b / a));
    case PriorKind::kNormal: return a + b * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    case PriorKind::kTruncatedNormal: {
      // Inverse CDF between the bounds' probabilities.
      const double p0 = normal_cdf((lower - a) / b), p1 = normal_cdf((upper - a) / b);
      const double x = a + b * normal_quantile(p0 + (p1 - p0) * u1);
      return std::min(std::max(x, lower), upper);
    }
    case PriorKind::kFixed: return value;
  }
  return value;
}

double Prior::mean() const {
  switch (kind) {
    case PriorKind::kUniform: return 0.5 * (a + b);
    case PriorKind::kLogUniform: return (b - a) / std::log(b / a);
    case PriorKind::kNormal: return a;
    case PriorKind::kTruncatedNormal: {
      const double al = (lower - a) / b, be = (upper - a) / b;
      const double phi_a = std::exp(-0.5 * al * al), phi_b = std::exp(-0.5 * be * be);
      return a + b * (phi_a - phi_b) / std::sqrt(2 * M_PI) / (normal_cdf(be) - normal_cdf(al));
    }
    case PriorKind::kFixed: return value;
  }
  return value;
}

double Prior::standard_deviation() const {
  switch (kind) {
    case PriorKind::kUniform: return (b - a) / std::sqrt(12.0);
    case PriorKind::kLogUniform: {
      const double l = std::log(b / a), m = (b - a) / l;
      return std::sqrt((b * b - a * a) / (2 * l) - m * m);
    }
    case PriorKind::kNormal: return b;
    case PriorKind::kTruncatedNormal: {
      const double al = (lower - a) / b, be = (upper - a) / b, z = normal_cdf(be) - normal_cdf(al);
      const double phi_a = std::exp(-0.5 * al * al) / std::sqrt(2 * M_PI);
      const double phi_b = std::exp(-0.5 * be * be) / std::sqrt(2 * M_PI);
      const double t1 = (std::isfinite(al) ? al * phi_a : 0.0) - (std::isfinite(be) ? be * phi_b : 0.0);
      const double t2 = (phi_a - phi_b) / z;
      return b * std::sqrt(std::max(1 + t1 / z - t2 * t2, 0.0));
    }
    case PriorKind::kFixed: return 0.0;
  }
  return 0.0;
}

std::string Prior::text() const {
  char buffer[160];
  switch (kind) {
    case PriorKind::kUniform: std::snprintf(buffer, sizeof buffer, "uniform(%.10g, %.10g)", a, b); break;
    case PriorKind::kLogUniform: std::snprintf(buffer, sizeof buffer, "log_uniform(%.10g, %.10g)", a, b); break;
    case PriorKind::kNormal: std::snprintf(buffer, sizeof buffer, "normal(%.10g, %.10g)", a, b); break;
    case PriorKind::kTruncatedNormal:
      std::snprintf(buffer, sizeof buffer, "truncated_normal(%.10g, %.10g, %.10g, %.10g)", a, b, lower, upper);
      break;
    case PriorKind::kFixed: std::snprintf(buffer, sizeof buffer, "fixed(%.17g)", value); break;
  }
  return buffer;
}

ParameterSpace::ParameterSpace(std::vector<std::string> names, std::vector<Prior> priors, std::vector<double> values)
    : names_(std::move(names)), priors_(std::move(priors)), values_(std::move(values)) {
  if (priors_.size() != names_.size() || values_.size() != names_.size())
    throw std::invalid_argument("ParameterSpace: names, priors and values differ in length");
  for (int k = 0; k < num_parameters(); ++k) {
    if (priors_[k].kind == PriorKind::kFixed) {
      if (priors_[k].has_value) values_[k] = priors_[k].value;
      priors_[k].value = values_[k];
    } else {
      free_.push_back(k);
    }
  }
}

void ParameterSpace::expand(const double* free, double* full) const {
  for (int k = 0; k < num_parameters(); ++k) full[k] = values_[k];
  for (int j = 0; j < num_free(); ++j) full[free_[j]] = free[j];
}

void ParameterSpace::contract(const double* full, double* free) const {
  for (int j = 0; j < num_free(); ++j) free[j] = full[free_[j]];
}

std::vector<char> ParameterSpace::log_coordinates() const {
  std::vector<char> out(free_.size(), 0);
  for (int j = 0; j < num_free(); ++j) out[j] = priors_[free_[j]].kind == PriorKind::kLogUniform;
  return out;
}

double ParameterSpace::log_prior(const double* free) const {
  double sum = 0;
  for (int j = 0; j < num_free(); ++j) sum += priors_[free_[j]].log_density(free[j]);
  return sum;
}

}  // namespace swarmfit
