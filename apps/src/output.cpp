#include "output.hpp"

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <stdexcept>

namespace swarmfit::app {

namespace {

using h5::check;
using h5::checked;

// Appends one record along the first axis of an extendible dataset (created on first use).
void append_record(hid_t group, const char* name, hid_t type, const std::vector<hsize_t>& record_dims, long index,
                   const void* data) {
  std::vector<hsize_t> dims = {static_cast<hsize_t>(index + 1)};
  dims.insert(dims.end(), record_dims.begin(), record_dims.end());
  hid_t set;
  if (index == 0) {
    std::vector<hsize_t> max = dims, chunk = dims;
    max[0] = H5S_UNLIMITED;
    chunk[0] = 1;
    const hid_t space = checked(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), max.data()), name);
    const hid_t props = checked(H5Pcreate(H5P_DATASET_CREATE), name);
    check(H5Pset_chunk(props, static_cast<int>(chunk.size()), chunk.data()), name);
    set = checked(H5Dcreate2(group, name, type, space, H5P_DEFAULT, props, H5P_DEFAULT), name);
    H5Pclose(props);
    H5Sclose(space);
  } else {
    set = checked(H5Dopen2(group, name, H5P_DEFAULT), name);
    check(H5Dset_extent(set, dims.data()), name);
  }
  const hid_t file_space = checked(H5Dget_space(set), name);
  std::vector<hsize_t> start(dims.size(), 0), count = dims;
  start[0] = static_cast<hsize_t>(index);
  count[0] = 1;
  check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), name);
  const hid_t memory_space = checked(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), name);
  check(H5Dwrite(set, type, memory_space, file_space, H5P_DEFAULT, data), name);
  H5Sclose(memory_space);
  H5Sclose(file_space);
  H5Dclose(set);
}

void gather(const Ensemble& e, std::vector<double>& pos, std::vector<double>& vel) {
  const long m = e.num_systems();
  const int n = e.num_bodies();
  pos.resize(static_cast<std::size_t>(m) * n * 3);
  vel.resize(pos.size());
  for (long s = 0; s < m; ++s)
    for (int i = 0; i < n; ++i)
      for (int d = 0; d < 3; ++d) {
        pos[(s * n + i) * 3 + d] = e.position(s, i, d);
        vel[(s * n + i) * 3 + d] = e.velocity(s, i, d);
      }
}

}  // namespace

Hdf5Writer::Hdf5Writer(const std::string& path, const Ensemble& e)
    : file_(path), num_systems_(e.num_systems()), num_bodies_(e.num_bodies()) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  h5_ = H5Fcreate(file_.partial_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (h5_ < 0) throw std::runtime_error(path + ": cannot create the HDF5 file");
}
Hdf5Writer::~Hdf5Writer() {
  if (snapshots_ >= 0) H5Gclose(snapshots_);
  if (h5_ >= 0) H5Fclose(h5_);
}

void Hdf5Writer::set_attribute(const std::string& name, const std::string& value) { h5::attribute(h5_, name, value); }
void Hdf5Writer::set_attribute(const std::string& name, double value) { h5::attribute(h5_, name, value); }

void Hdf5Writer::append_snapshot(const Ensemble& e, double time) {
  if (snapshots_ < 0)
    snapshots_ = checked(H5Gcreate2(h5_, "snapshots", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "snapshots");
  std::vector<double> pos, vel;
  gather(e, pos, vel);
  std::vector<int> status(static_cast<std::size_t>(num_systems_));
  for (long s = 0; s < num_systems_; ++s) status[s] = e.status(s);
  const std::vector<hsize_t> state = {static_cast<hsize_t>(num_systems_), static_cast<hsize_t>(num_bodies_), 3};
  append_record(snapshots_, "time", H5T_NATIVE_DOUBLE, {}, num_snapshots_, &time);
  append_record(snapshots_, "positions", H5T_NATIVE_DOUBLE, state, num_snapshots_, pos.data());
  append_record(snapshots_, "velocities", H5T_NATIVE_DOUBLE, state, num_snapshots_, vel.data());
  append_record(snapshots_, "status", H5T_NATIVE_INT, {static_cast<hsize_t>(num_systems_)}, num_snapshots_,
                status.data());
  ++num_snapshots_;
}

void Hdf5Writer::write_final(const Ensemble& e, const RunSummary& summary) {
  const hid_t group = checked(H5Gcreate2(h5_, "final", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "final");
  std::vector<double> pos, vel, mass, time, steps;
  gather(e, pos, vel);
  std::vector<int> status;
  for (long s = 0; s < num_systems_; ++s) {
    for (int i = 0; i < num_bodies_; ++i) mass.push_back(e.mass(s, i));
    time.push_back(e.time(s));
    steps.push_back(e.steps(s));
    status.push_back(e.status(s));
  }
  const hsize_t m = static_cast<hsize_t>(num_systems_), n = static_cast<hsize_t>(num_bodies_);
  h5::write(group, "positions", {m, n, 3}, pos.data());
  h5::write(group, "velocities", {m, n, 3}, vel.data());
  h5::write(group, "masses", {m, n}, mass.data());
  h5::write(group, "time", {m}, time.data());
  h5::write(group, "steps", {m}, steps.data());
  h5::write(group, "status", {m}, status.data());
  h5::write(group, "energy_error", {m}, summary.energy_error.data());
  H5Gclose(group);
}

void Hdf5Writer::commit() {
  if (snapshots_ >= 0) H5Gclose(snapshots_);
  snapshots_ = -1;
  check(H5Fclose(h5_), "close");
  h5_ = -1;
  file_.commit();
}

void write_states_csv(const std::string& path, const Ensemble& e) {
  AtomicFile file(path);
  {
    std::ofstream out(file.partial_path());
    if (!out) throw std::runtime_error(path + ": cannot create the CSV file");
    out << "system,body,time,status,mass,radius,x,y,z,vx,vy,vz\n" << std::setprecision(17);
    for (long s = 0; s < e.num_systems(); ++s) {
      for (int i = 0; i < e.num_bodies(); ++i) {
        out << s << ',' << i << ',' << e.time(s) << ',' << e.status(s) << ',' << e.mass(s, i) << ',' << e.radius(s, i);
        for (int d = 0; d < 3; ++d) out << ',' << e.position(s, i, d);
        for (int d = 0; d < 3; ++d) out << ',' << e.velocity(s, i, d);
        out << '\n';
      }
    }
    if (!out.flush()) throw std::runtime_error(path + ": write failed");
  }
  file.commit();
}

}  // namespace swarmfit::app
