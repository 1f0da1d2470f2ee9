// Priors of named parameters and the map between the full parameter vector of a model and the
// free vector the sampler moves. Syntax (one per parameter):
//   uniform(a, b)                  density 1/(b - a) on [a, b]
//   log_uniform(a, b)              density 1/(x ln(b/a)) on [a, b], 0 < a < b (Jeffreys)
//   normal(mu, sigma)              Gaussian
//   truncated_normal(mu, sigma, a, b)  Gaussian restricted to [a, b], renormalised
//   fixed  or  fixed(v)            not sampled: the model's value (or v)
// Log-densities are normalised, so ln prior + ln L is the log of the unnormalised posterior.
#pragma once

#include <string>
#include <vector>

namespace swarmfit {

enum class PriorKind { kUniform, kLogUniform, kNormal, kTruncatedNormal, kFixed };

struct Prior {
  PriorKind kind = PriorKind::kFixed;
  double a = 0, b = 0;                 // uniform / log-uniform bounds; normal mean and sigma
  double lower = 0, upper = 0;         // support ([-inf, inf] for normal)
  double value = 0;                    // fixed: the value (NaN: the model's)
  bool has_value = false;              // fixed(v) rather than fixed
  double log_density(double x) const;  // -inf outside the support
  // A draw from the prior from two independent uniforms in (0, 1) (not for fixed).
  double sample(double u1, double u2) const;
  double mean() const;
  double standard_deviation() const;
  std::string text() const;  // as written in the config
};

// Parses the syntax above; throws std::invalid_argument with a one-line reason.
Prior parse_prior(const std::string& text);

// Names and priors of all model parameters; the sampler sees only the free ones.
class ParameterSpace {
 public:
  ParameterSpace(std::vector<std::string> names, std::vector<Prior> priors, std::vector<double> values);

  int num_parameters() const { return static_cast<int>(names_.size()); }
  int num_free() const { return static_cast<int>(free_.size()); }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<Prior>& priors() const { return priors_; }
  const std::vector<int>& free_indices() const { return free_; }
  const std::vector<double>& values() const { return values_; }  // fixed values, and the guess of the free ones

  // Free vector -> full vector (fixed parameters from values()).
  void expand(const double* free, double* full) const;
  void contract(const double* full, double* free) const;
  // Sum of the free parameters' log prior densities.
  double log_prior(const double* free) const;
  // Per free parameter, 1 where the sampler's moves should work in ln x (DemcmcSettings::
  // log_coordinates): the log-uniform (scale) parameters.
  std::vector<char> log_coordinates() const;

 private:
  std::vector<std::string> names_;
  std::vector<Prior> priors_;
  std::vector<double> values_;
  std::vector<int> free_;
};

}  // namespace swarmfit
