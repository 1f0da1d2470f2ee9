// Output of `swarmfit integrate`: final states (and optional snapshots) to HDF5 and/or CSV.
// Files are written under a temporary name and renamed only when complete, so a failed run
// leaves nothing behind.
#pragma once

#include <hdf5.h>

#include <string>
#include <vector>

#include "swarmfit/inference/hdf5_io.hpp"
#include "swarmfit/integrators/ensemble.hpp"

namespace swarmfit::app {

struct RunSummary {
  std::vector<double> energy_error;  // (E - E0) / |E0| per system
};

// A file that appears at its path only after commit() (swarmfit/inference/hdf5_io.hpp).
using h5::AtomicFile;
using h5::remove_partials_on_signals;

// HDF5 layout (documented in the README):
//   /final/{positions [M][n][3], velocities [M][n][3], masses [M][n], time [M], status [M],
//           steps [M], energy_error [M]}
//   /snapshots/{time [K], positions [K][M][n][3], velocities [K][M][n][3], status [K][M]}
//   root attributes: integrator, G, time_step, destination_time, config, swarmfit_version.
class Hdf5Writer {
 public:
  Hdf5Writer(const std::string& path, const Ensemble& ensemble);
  ~Hdf5Writer();
  void set_attribute(const std::string& name, const std::string& value);
  void set_attribute(const std::string& name, double value);
  void append_snapshot(const Ensemble& ensemble, double time);
  void write_final(const Ensemble& ensemble, const RunSummary& summary);
  void commit();

 private:
  AtomicFile file_;
  hid_t h5_ = -1;
  hid_t snapshots_ = -1;
  long num_systems_;
  int num_bodies_;
  long num_snapshots_ = 0;
};

// CSV: system,body,time,status,mass,radius,x,y,z,vx,vy,vz (readable again as initial conditions
// or as a --reference file), full precision.
void write_states_csv(const std::string& path, const Ensemble& ensemble);

}  // namespace swarmfit::app
