// Backend steps against host steps, for the CPU and GPU backends (test_nbody.cpp,
// test_nbody_gpu.cpp).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "swarmfit/nbody/engine.hpp"
#include "swarmfit/nbody/initial_conditions.hpp"

namespace swarmfit::nbody {

// Backend steps (the backend predicts and corrects the active bodies on its own copy; the GPU's
// path) against the engine's host steps: the same functions on the same numbers, so the same
// bits, orders 4 and 6, test particles included, with the states read in the middle of the run
// (the copy back) and the energies (forces through the backend's held bodies). Also with the
// ranks' sums handed back (a reduction that adds nothing: the MPI path in one process), resumed
// from the states at the middle, and on shared steps.
inline void expect_same_bodies(BlockHermite& a, BlockHermite& b, const std::string& what) {
  const Bodies &h = a.bodies(), &g = b.bodies();
  ASSERT_EQ(h.size(), g.size()) << what;
  for (long i = 0; i < h.size(); ++i) {
    ASSERT_EQ(h.time[i], g.time[i]) << what << " body " << i;
    ASSERT_EQ(h.step[i], g.step[i]) << what << " body " << i;
    for (int d = 0; d < 3; ++d) {
      ASSERT_EQ(h.state[i].x[d], g.state[i].x[d]) << what << " body " << i;
      ASSERT_EQ(h.state[i].v[d], g.state[i].v[d]) << what << " body " << i;
      ASSERT_EQ(h.state[i].a[d], g.state[i].a[d]) << what << " body " << i;
      ASSERT_EQ(h.state[i].j[d], g.state[i].j[d]) << what << " body " << i;
      ASSERT_EQ(h.state[i].s[d], g.state[i].s[d]) << what << " body " << i;
      ASSERT_EQ(h.state[i].c[d], g.state[i].c[d]) << what << " body " << i;
    }
  }
  EXPECT_EQ(a.energy().total(), b.energy().total()) << what;
}

inline void expect_backend_steps_equal_host_steps(const std::function<std::unique_ptr<ForceBackend>()>& make_backend) {
  Bodies b = plummer_sphere(300, 4);
  append_test_particles(b, 40);
  for (long i = 300; i < b.size(); ++i)
    for (int d = 0; d < 3; ++d) {
      b.state[i].x[d] = 0.8 * b.state[i - 300].x[d];
      b.state[i].v[d] = b.state[i - 300].v[d];
    }
  const Reduce adds_nothing = [](double*, std::size_t) {};
  for (int order : {4, 6})
    for (bool shared : {false, true}) {
      if (shared && order == 6) continue;  // (shared steps: the same path, every body each step)
      const std::string what = "order " + std::to_string(order) + (shared ? ", shared steps" : "");
      NbodySettings s;
      s.order = order;
      s.softening = 0.01;
      s.shared_steps = shared;
      s.max_step = shared ? 0.0078125 : 0.125;
      s.backend_steps = false;
      BlockHermite host(b, s, make_backend());
      s.backend_steps = true;
      BlockHermite backend(b, s, make_backend()), summed(b, s, make_backend(), JSlice{}, adds_nothing);
      for (BlockHermite* e : {&host, &backend, &summed}) e->initialise();
      const double middle = s.max_step;
      for (BlockHermite* e : {&host, &backend, &summed}) e->run_until(middle);
      ASSERT_EQ(host.counters().block_steps, backend.counters().block_steps) << what;
      expect_same_bodies(host, backend, what + ", middle");
      expect_same_bodies(host, summed, what + ", middle, the sums handed back");
      BlockHermite resumed(backend.bodies(), s, make_backend());
      resumed.resume();
      for (BlockHermite* e : {&host, &backend, &summed, &resumed}) e->run_until(2 * middle);
      expect_same_bodies(host, backend, what);
      expect_same_bodies(host, summed, what + ", the sums handed back");
      expect_same_bodies(host, resumed, what + ", resumed");
      EXPECT_GT(backend.counters().block_steps, shared ? 10 : 100) << what;
    }
}

}  // namespace swarmfit::nbody
