// The large-N engine's forces on CPU threads (OpenMP) and SIMD lanes: the massive bodies kept as
// structures of arrays, predicted to the block time in one pass, then the pair sums of every
// active body. The work is cut into (active body, chunk of j) tasks so that a block step with a
// few active bodies still occupies every core; a chunk's size depends only on the numbers of
// active and massive bodies, and the chunks of a body are added in order, so the sums are
// bitwise the same for any thread count.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "swarmfit/nbody/force_backend.hpp"

namespace swarmfit::nbody {

namespace {

constexpr int kFields = 18;  // x v a j s c, 3 each

class CpuBackend final : public ForceBackend {
 public:
  explicit CpuBackend(int threads) : threads_(threads > 0 ? threads : omp_get_max_threads()) {}
  std::string name() const override { return "cpu"; }

  void load(const std::vector<BodyState>& state, const std::vector<double>& time,
            const std::vector<double>& gm) override {
    load_bodies(state, time, gm, static_cast<long>(gm.size()));
  }

  // Backend steps on the CPU: the same predictor and corrector as the engine's host steps, on
  // this backend's copy of the bodies (the GPU backend's path, so that it runs and is tested
  // without a GPU; no copy of corrected bodies into the backend either).
  void load_all(const std::vector<BodyState>& state, const std::vector<double>& time,
                const std::vector<double>& gm) override {
    load_bodies(state, time, gm, static_cast<long>(state.size()));
  }

  void active_forces(double t, int order, double eps2, const JSlice& slice, const std::vector<int>& active,
                     ForceResult& out) override {
    if (order != 4 && order != 6) throw std::logic_error("active_forces: order 4 or 6");
    const int ni = static_cast<int>(active.size());
    batch_.index = active;
    batch_.potential = false;
    batch_.x.resize(3 * static_cast<std::size_t>(ni));
    batch_.v.resize(3 * static_cast<std::size_t>(ni));
    batch_.a.resize(3 * static_cast<std::size_t>(ni));
    batch_.j.clear();
    const int predict_threads = std::min(threads_, host_threads(ni, 50));
#pragma omp parallel for schedule(static) num_threads(predict_threads) if (predict_threads > 1)
    for (int k = 0; k < ni; ++k) {
      const int i = active[k];
      predict(load_state(i), t - time_[i], &batch_.x[3 * k], &batch_.v[3 * k], &batch_.a[3 * k]);
    }
    forces(t, order, eps2, slice, batch_, out);
    own_ = out;
  }

  void correct_active(double t, int order, double eta, double max_step, const ForceResult* summed,
                      std::vector<double>& wanted, std::vector<double>& next_step) override {
    const ForceResult& r = summed ? *summed : own_;
    const int ni = batch_.size();
    wanted.resize(ni);
    next_step.resize(ni);
    const int correct_threads = std::min(threads_, host_threads(ni, 200));
#pragma omp parallel for schedule(static) num_threads(correct_threads) if (correct_threads > 1)
    for (int k = 0; k < ni; ++k) {
      const int i = batch_.index[k];
      BodyState b = load_state(i);
      const double h = t - time_[i];
      wanted[k] = order == 6 ? correct<6>(b, h, r.acc(k), r.jerk(k), r.snap(k), eta)
                             : correct<4>(b, h, r.acc(k), r.jerk(k), nullptr, eta);
      next_step[k] = quantise_step(wanted[k], h, t, max_step);
      store(i, b);
      time_[i] = t;
    }
  }

  void download(std::vector<BodyState>& state) override {
    state.resize(n_);
    for (long j = 0; j < n_; ++j) state[j] = load_state(j);
  }

  void update(const std::vector<int>& index, const std::vector<BodyState>& state,
              const std::vector<double>& time) override {
    for (int j : index) {
      store(j, state[j]);
      time_[j] = time[j];
    }
  }

  void forces(double t, int order, double eps2, const JSlice& slice, const IBatch& batch, ForceResult& out) override {
    const long first = slice.first, last = slice.last < 0 ? massive_ : slice.last;
    predict_all(t, first, last, order == 8);
    const int ni = batch.size();
    const long nj = last - first;
    if (ni == 0 || nj <= 0) return;
    // Tasks: enough for every thread even with one active body, chunks of at least 256 j.
    const long chunks = std::max(1L, std::min((nj + 255) / 256, (64L + ni - 1) / ni));
    const long chunk = (nj + chunks - 1) / chunks;
    const int width = packed_width(order);
    partial_.assign(static_cast<std::size_t>(ni) * chunks * width, 0.0);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_)
    for (long task = 0; task < ni * chunks; ++task) {
      const int k = static_cast<int>(task / chunks);
      const long c = task % chunks;
      const long j0 = first + c * chunk, j1 = std::min(last, j0 + chunk);
      double* p = &partial_[static_cast<std::size_t>(task) * width];
      if (order == 8)
        sum_pairs<8>(batch, k, j0, j1, eps2, p);
      else if (order == 6)
        sum_pairs<6>(batch, k, j0, j1, eps2, p);
      else
        sum_pairs<4>(batch, k, j0, j1, eps2, p);
    }
    // Each body's chunks added in order (into its zeroed row).
#pragma omp parallel for schedule(static) num_threads(threads_) if (ni > 1024)
    for (int k = 0; k < ni; ++k) {
      double* row = out.row(k);
      for (long c = 0; c < chunks; ++c) {
        const double* p = &partial_[(static_cast<std::size_t>(k) * chunks + c) * width];
        for (int w = 0; w < width; ++w) row[w] += p[w];
      }
    }
  }

 private:
  void load_bodies(const std::vector<BodyState>& state, const std::vector<double>& time, const std::vector<double>& gm,
                   long n) {
    n_ = n;
    massive_ = static_cast<long>(gm.size());
    gm_ = gm;
    time_.assign(time.begin(), time.begin() + n_);
    for (auto& f : fields_) f.assign(n_, 0.0);
    for (auto& p : predicted_) p.assign(massive_, 0.0);
    for (long j = 0; j < n_; ++j) store(j, state[j]);
  }

  BodyState load_state(long j) const {
    BodyState b;
    for (int d = 0; d < 3; ++d) {
      b.x[d] = fields_[d][j];
      b.v[d] = fields_[3 + d][j];
      b.a[d] = fields_[6 + d][j];
      b.j[d] = fields_[9 + d][j];
      b.s[d] = fields_[12 + d][j];
      b.c[d] = fields_[15 + d][j];
    }
    return b;
  }

  void store(long j, const BodyState& b) {
    for (int d = 0; d < 3; ++d) {
      fields_[d][j] = b.x[d];
      fields_[3 + d][j] = b.v[d];
      fields_[6 + d][j] = b.a[d];
      fields_[9 + d][j] = b.j[d];
      fields_[12 + d][j] = b.s[d];
      fields_[15 + d][j] = b.c[d];
    }
  }

  void predict_all(double t, long first, long last, bool jerk) {
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (long j = first; j < last; ++j) {
      const BodyState b = load_state(j);
      double xp[3], vp[3], ap[3];
      predict(b, t - time_[j], xp, vp, ap);
      for (int d = 0; d < 3; ++d) {
        predicted_[d][j] = xp[d];
        predicted_[3 + d][j] = vp[d];
        predicted_[6 + d][j] = ap[d];
      }
      if (jerk) {
        double jp[3];
        predict_jerk(b, t - time_[j], jp);
        for (int d = 0; d < 3; ++d) predicted_[9 + d][j] = jp[d];
      }
    }
  }

  // The pair sums of active body k over j in [j0, j1) into out (a packed row of ForceResult).
  template <int Order>
  void sum_pairs(const IBatch& batch, int k, long j0, long j1, double eps2, double* out) const {
    if constexpr (Order == 8) {
      std::fill(out, out + packed_width(8), 0.0);
      sum_range<8, true>(k, batch, j0, j1, eps2, out);
    } else {
      double sum[kPairSums] = {};
      if (batch.potential)
        sum_range<Order, true>(k, batch, j0, j1, eps2, sum);
      else
        sum_range<Order, false>(k, batch, j0, j1, eps2, sum);
      finish_pair_sums<Order>(sum, out);
    }
  }

  // Orders 4 and 6: accumulate_pair's sums, vectorised over j (OpenMP SIMD reductions). Order 8
  // (once per run, at the start): pair_terms<8> in a plain loop, into the 13 packed sums.
  template <int Order, bool Potential>
  void sum_range(int k, const IBatch& batch, long j0, long j1, double eps2, double* sum) const {
    const double xi = batch.x[3 * k], yi = batch.x[3 * k + 1], zi = batch.x[3 * k + 2];
    const double vxi = batch.v[3 * k], vyi = batch.v[3 * k + 1], vzi = batch.v[3 * k + 2];
    const double axi = batch.a[3 * k], ayi = batch.a[3 * k + 1], azi = batch.a[3 * k + 2];
    const long self = batch.index[k];
    const double *X = predicted_[0].data(), *Y = predicted_[1].data(), *Z = predicted_[2].data();
    const double *VX = predicted_[3].data(), *VY = predicted_[4].data(), *VZ = predicted_[5].data();
    const double *AX = predicted_[6].data(), *AY = predicted_[7].data(), *AZ = predicted_[8].data();
    const double* M = gm_.data();
    if constexpr (Order == 8) {
      const double *JX = predicted_[9].data(), *JY = predicted_[10].data(), *JZ = predicted_[11].data();
      const double jxi = batch.j[3 * k], jyi = batch.j[3 * k + 1], jzi = batch.j[3 * k + 2];
#pragma omp simd reduction(+ : sum[:13])
      for (long j = j0; j < j1; ++j) {
        double t[13];
        const double dj[3] = {JX[j] - jxi, JY[j] - jyi, JZ[j] - jzi};
        pair_terms<8>(X[j] - xi, Y[j] - yi, Z[j] - zi, VX[j] - vxi, VY[j] - vyi, VZ[j] - vzi, AX[j] - axi, AY[j] - ayi,
                      AZ[j] - azi, M[j], eps2, j == self, t, dj);
#pragma GCC unroll 13
        for (int q = 0; q < 13; ++q) sum[q] += t[q];
      }
    } else {
#pragma omp simd reduction(+ : sum[:kPairSums])
      for (long j = j0; j < j1; ++j)
        accumulate_pair<Order, Potential>(X[j] - xi, Y[j] - yi, Z[j] - zi, VX[j] - vxi, VY[j] - vyi, VZ[j] - vzi,
                                          AX[j] - axi, AY[j] - ayi, AZ[j] - azi, M[j], eps2, j == self, sum);
    }
  }

  int threads_;
  long n_ = 0, massive_ = 0;  // every body held (backend steps: test particles too), the massive ones
  IBatch batch_;              // backend steps: the active bodies, predicted
  ForceResult own_;           // and their forces from this process's slice
  std::vector<double> gm_, time_;
  std::vector<double> fields_[kFields];
  std::vector<double> predicted_[12];  // x v a (j: order 8 only)
  std::vector<double> partial_;
};

}  // namespace

std::unique_ptr<ForceBackend> make_cpu_backend(int threads) { return std::make_unique<CpuBackend>(threads); }

}  // namespace swarmfit::nbody
