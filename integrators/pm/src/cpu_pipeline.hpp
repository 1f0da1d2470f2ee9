// What the CPU backends (pm_cpu.cpp: one process; pm_mpi.cpp: slabs over MPI ranks) share: the
// stages of a force pass in order with their timings, and the stable counting sort of the
// particles by mesh column that makes their deposits deterministic for any thread count.
#pragma once

#include <chrono>
#include <vector>

#include "swarmfit/pm/pm.hpp"

namespace swarmfit::pm {

template <class Real>
class CpuPipeline : public MeshForces<Real> {
 public:
  void accelerations(ParticleSet<Real>& p, std::vector<Real>* acc, std::vector<Real>* potential) final {
    PmTimings& t = this->timings_;
    t.sort = timed([&] { sort(p); });
    t.assign = timed([&] { assign(p); });
    t.solve = timed([&] { solve(); });
    t.gradient = timed([&] { gradient(); });
    t.interpolate = timed([&] {
      if (acc) acc->resize(3 * static_cast<std::size_t>(p.size()));
      if (potential) potential->resize(p.size());
      interpolate(p, acc, potential);
    });
  }

 protected:
  // Marks (and for a distributed backend moves) particles, then sorts them by column.
  virtual void sort(ParticleSet<Real>& p) = 0;
  virtual void assign(const ParticleSet<Real>& p) = 0;
  virtual void solve() = 0;
  virtual void gradient() = 0;  // (nothing where the solve gave the accelerations)
  virtual void interpolate(const ParticleSet<Real>& p, std::vector<Real>* acc, std::vector<Real>* potential) = 0;

  // column_[i]: particle i's column (or -1: not on the mesh) -> start_ (columns + 1 offsets) and
  // order_, the particles column by column, each column's in their own order.
  void sort_by_column(long columns) {
    const long np = static_cast<long>(column_.size());
    start_.assign(columns + 1, 0);
    for (long i = 0; i < np; ++i)
      if (column_[i] >= 0) ++start_[column_[i] + 1];
    for (long c = 0; c < columns; ++c) start_[c + 1] += start_[c];
    order_.resize(start_[columns]);
    std::vector<long> next(start_.begin(), start_.end() - 1);
    for (long i = 0; i < np; ++i)
      if (column_[i] >= 0) order_[next[column_[i]]++] = i;
  }
  std::vector<long> column_, start_, order_;

 private:
  template <class Stage>
  static double timed(const Stage& stage) {
    const auto t = std::chrono::steady_clock::now();
    stage();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }
};

}  // namespace swarmfit::pm
