// libFuzzer target: the HDF5 run file reader (read_run, read_run_config; `swarmfit summary`,
// `plot`, `stability`, `fit --resume`), issue 37 "hostile input". Two kinds of input:
//  - an input that starts with the HDF5 signature is the run file itself (damaged bytes);
//  - any other input is a list of edits applied, through the HDF5 library, to a valid run file
//    (run_template.h5, written by `swarmfit fit` on the demo, its large /predictive group left
//    out): each edit deletes a dataset or attribute, or replaces it by one of another type, shape
//    or values (NaN, huge, negative, empty), which damaged bytes almost never reach.
// read_run documents std::runtime_error for files it cannot use (inference/ does not depend on
// observations/'s InputError), so exactly that type is accepted besides InputError; any other
// exception, a crash or a sanitizer report is a finding.
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "swarmfit/inference/hdf5_io.hpp"
#include "swarmfit/inference/run_file.hpp"

namespace {

const char* const kTemplate = SWARMFIT_SOURCE_DIR "/tests/fuzz/run_template.h5";

// What an edit can reach: a dataset (attribute empty) or an attribute of an object (path "." for
// the root), listed once from the template.
struct Target {
  std::string object, attribute;
};

herr_t add_attribute(hid_t, const char* name, const H5A_info_t*, void* targets_and_object) {
  auto* p = static_cast<std::pair<std::vector<Target>*, std::string>*>(targets_and_object);
  p->first->push_back({p->second, name});
  return 0;
}

herr_t add_object(hid_t root, const char* name, const H5O_info_t* info, void* targets) {
  auto* list = static_cast<std::vector<Target>*>(targets);
  const std::string path = name;
  if (info->type == H5O_TYPE_DATASET) list->push_back({path, ""});
  const hid_t object = H5Oopen(root, name, H5P_DEFAULT);
  std::pair<std::vector<Target>*, std::string> context(list, path);
  H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_NATIVE, nullptr, add_attribute, &context);
  H5Oclose(object);
  return 0;
}

const std::vector<Target>& targets() {
  static const std::vector<Target> list = [] {
    std::vector<Target> out;
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    const hid_t file = H5Fopen(kTemplate, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) swarmfit::fuzz::finding("fuzz_run_file", std::string("cannot open ") + kTemplate);
#if !H5_VERSION_GE(1, 12, 0)  // Debian 12: HDF5 1.10, whose H5Ovisit takes no fields argument
    H5Ovisit(file, H5_INDEX_NAME, H5_ITER_NATIVE, add_object, &out);
#else
    H5Ovisit(file, H5_INDEX_NAME, H5_ITER_NATIVE, add_object, &out, H5O_INFO_BASIC);
#endif
    H5Fclose(file);
    return out;
  }();
  return list;
}

const double kDoubles[] = {0.0,   1.0,    -1.0,   std::numeric_limits<double>::quiet_NaN(),
                           1e308, -1e308, 1e-300, std::numeric_limits<double>::infinity(),
                           0.5,   3.0,    26.0,   2147483648.0,
                           -0.0,  1e18,   12.0,   -std::numeric_limits<double>::infinity()};
const long kLongs[] = {0,
                       1,
                       -1,
                       2,
                       3,
                       12,
                       17,
                       26,
                       1000000000L,
                       2147483647L,
                       2147483648L,
                       -2147483648L,
                       std::numeric_limits<long>::max(),
                       std::numeric_limits<long>::min(),
                       1L << 40,
                       51};
const char* const kStrings[] = {"",        "x",          "uniform 0 1", "normal 0 nan",    "mass_b", "fixed",
                                "log 0 1", "period_b",   "days",        "\xff\xfe",        "1e400",  "uniform 1 0",
                                "[",       "normal 0 0", "star_mass",   "uniform -inf inf"};

// Closes an HDF5 object however the edit ends (an edit HDF5 refuses throws): an object left open
// would keep the file open past H5Fclose, and the next input's copy would grow the memory.
struct Closer {
  hid_t id;
  ~Closer() {
    if (id >= 0) H5Oclose(id);
  }
};

// Consumes bytes from the front of the input; zeros once it is used up.
struct Reader {
  const uint8_t* data;
  std::size_t size;
  uint8_t next() {
    if (size == 0) return 0;
    --size;
    return *data++;
  }
};

void apply_edit(hid_t file, const Target& t, Reader& in) {
  const uint8_t op = in.next();
  const int rank = op >> 6;  // 0 (a scalar or one value) to 3
  std::vector<hsize_t> dims;
  std::size_t count = 1;
  for (int k = 0; k < rank; ++k) {
    dims.push_back(in.next() % 30);
    count *= dims.back();
  }
  const uint8_t fill = in.next();
  namespace h5 = swarmfit::h5;
  Closer object{H5Oopen(file, t.object.c_str(), H5P_DEFAULT)};
  if (object.id < 0) return;  // removed by an earlier edit
  if (t.attribute.empty()) {
    H5Oclose(object.id);
    object.id = -1;
    H5Ldelete(file, t.object.c_str(), H5P_DEFAULT);
    const std::filesystem::path path(t.object);
    const std::string parent = path.has_parent_path() ? path.parent_path().string() : ".";
    const Closer closer{H5Oopen(file, parent.c_str(), H5P_DEFAULT)};
    const hid_t group = closer.id;
    if (group < 0) return;
    const std::string name = path.filename().string();
    if (dims.empty()) dims.push_back(1);
    switch (op & 3) {
      case 0: break;  // deleted
      case 1: {
        std::vector<double> v(count);
        for (std::size_t k = 0; k < count; ++k) v[k] = kDoubles[(fill + k * (op >> 2)) & 15];
        h5::write(group, name, dims, v.data());
        break;
      }
      case 2: {
        std::vector<long> v(count);
        for (std::size_t k = 0; k < count; ++k) v[k] = kLongs[(fill + k * (op >> 2)) & 15];
        h5::write(group, name, dims, v.data());
        break;
      }
      case 3: {
        std::vector<std::string> v(dims[0]);
        for (std::size_t k = 0; k < v.size(); ++k) v[k] = kStrings[(fill + k) & 15];
        h5::write_strings(group, name, v);
        break;
      }
    }
  } else {
    H5Adelete(object.id, t.attribute.c_str());
    const std::size_t n = rank == 0 ? 1 : dims[0];
    switch (op & 3) {
      case 0: break;
      case 1:
        if (rank == 0) {
          h5::attribute(object.id, t.attribute, kDoubles[fill & 15]);
        } else {
          std::vector<double> v(n);
          for (std::size_t k = 0; k < n; ++k) v[k] = kDoubles[(fill + k) & 15];
          h5::attribute(object.id, t.attribute, v);
        }
        break;
      case 2: h5::attribute(object.id, t.attribute, kLongs[fill & 15]); break;
      case 3:
        if (rank == 0) {
          h5::attribute(object.id, t.attribute, std::string(kStrings[fill & 15]));
        } else {
          std::vector<std::string> v(n);
          for (std::size_t k = 0; k < n; ++k) v[k] = kStrings[(fill + k) & 15];
          h5::attribute(object.id, t.attribute, v);
        }
        break;
    }
  }
}

// The template with the input's edits (at most 8), written as edited.h5.
std::string edited_file(const uint8_t* data, std::size_t size) {
  const std::string path = swarmfit::fuzz::temporary_folder() + "/edited.h5";
  std::filesystem::copy_file(kTemplate, path, std::filesystem::copy_options::overwrite_existing);
  const hid_t access = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fclose_degree(access, H5F_CLOSE_STRONG);  // closes whatever an edit left open
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, access);
  H5Pclose(access);
  if (file < 0) swarmfit::fuzz::finding("fuzz_run_file", "cannot open the copy of the template");
  Reader in{data, size};
  for (int e = 0; e < 8 && in.size > 0; ++e) {
    const std::size_t which = (in.next() | in.next() << 8) % targets().size();
    try {
      apply_edit(file, targets()[which], in);
    } catch (const std::runtime_error&) {
      // An edit HDF5 refuses (an empty variable-length string list, ...): the file stays as it is.
    }
  }
  H5Fclose(file);
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swarmfit;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const bool raw = size >= 4 && std::memcmp(data, "\x89HDF", 4) == 0;
  const std::string path = raw ? fuzz::write_file("raw.h5", data, size) : edited_file(data, size);
  fuzz::expect_input_error(
      "fuzz_run_file/read_run", [&] { read_run(path); }, &typeid(std::runtime_error));
  fuzz::expect_input_error(
      "fuzz_run_file/read_run_config", [&] { read_run_config(path); }, &typeid(std::runtime_error));
  return 0;
}
