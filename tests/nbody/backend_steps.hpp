// Backend steps against host steps, for the CPU and GPU backends (test_nbody.cpp,
// test_nbody_gpu.cpp).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "swarmfit/nbody/engine.hpp"
#include "swarmfit/nbody/initial_conditions.hpp"

namespace swarmfit::nbody {

// Backend steps (the backend predicts and corrects the active bodies on its own copy; the GPU's
// path) against the engine's host steps: the same functions on the same numbers, so the same
// bits, orders 4 and 6, test particles included, with the states read in the middle of the run
// (the copy back) and the energies (forces through the backend's held bodies).
inline void expect_backend_steps_equal_host_steps(const std::function<std::unique_ptr<ForceBackend>()>& make_backend) {
  Bodies b = plummer_sphere(300, 4);
  append_test_particles(b, 40);
  for (long i = 300; i < b.size(); ++i)
    for (int d = 0; d < 3; ++d) {
      b.state[i].x[d] = 0.8 * b.state[i - 300].x[d];
      b.state[i].v[d] = b.state[i - 300].v[d];
    }
  for (int order : {4, 6}) {
    NbodySettings s;
    s.order = order;
    s.softening = 0.01;
    s.backend_steps = false;
    BlockHermite host(b, s, make_backend());
    s.backend_steps = true;
    BlockHermite backend(b, s, make_backend());
    host.initialise();
    backend.initialise();
    for (double t : {0.125, 0.25}) {
      host.run_until(t);
      backend.run_until(t);
      const Bodies &h = host.bodies(), &g = backend.bodies();
      ASSERT_EQ(host.counters().block_steps, backend.counters().block_steps) << "order " << order;
      for (long i = 0; i < b.size(); ++i) {
        ASSERT_EQ(h.time[i], g.time[i]) << i;
        ASSERT_EQ(h.step[i], g.step[i]) << i;
        for (int d = 0; d < 3; ++d) {
          ASSERT_EQ(h.state[i].x[d], g.state[i].x[d]) << "order " << order << " body " << i;
          ASSERT_EQ(h.state[i].v[d], g.state[i].v[d]) << "order " << order << " body " << i;
          ASSERT_EQ(h.state[i].a[d], g.state[i].a[d]) << "order " << order << " body " << i;
          ASSERT_EQ(h.state[i].j[d], g.state[i].j[d]) << "order " << order << " body " << i;
          ASSERT_EQ(h.state[i].s[d], g.state[i].s[d]) << "order " << order << " body " << i;
          ASSERT_EQ(h.state[i].c[d], g.state[i].c[d]) << "order " << order << " body " << i;
        }
      }
      EXPECT_EQ(host.energy().total(), backend.energy().total()) << "order " << order;
    }
    EXPECT_GT(backend.counters().block_steps, 100);
  }
}

}  // namespace swarmfit::nbody
