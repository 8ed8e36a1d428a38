#include "validation/studies/run_hash.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "sim/compute/gpu_spec.hpp"
#include "sim/compute/kernel_time.hpp"
#include "topologies/src/topology_document.hpp"
#include "topologies/src/topology_loader.hpp"
#include "workloads/src/dataset.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/workload_document.hpp"

namespace gpuscale::sweep {
namespace {

namespace fs = std::filesystem;

class Fnv1a {
 public:
  // Each piece ends with a separator, so that ("ab", "c") and ("a", "bc") differ.
  Fnv1a& add(std::string_view bytes) {
    for (unsigned char c : bytes) mix(c);
    mix(0xff);
    return *this;
  }
  std::string hex() const { return fmt::format("{:016x}", state_); }

 private:
  void mix(unsigned char c) {
    state_ ^= c;
    state_ *= 0x100000001b3ULL;
  }
  std::uint64_t state_ = 0xcbf29ce484222325ULL;
};

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every .yaml file of a folder, in name order.
void add_folder(Fnv1a& h, const std::string& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) h.add(f.filename().string()).add(file_bytes(f.string()));
}

// A document's content, independent of where its values came from.
void add_document(Fnv1a& h, const ConfigNode& node) {
  switch (node.kind()) {
    case ConfigNode::Kind::Null:
      h.add("~");
      break;
    case ConfigNode::Kind::Scalar:
      h.add("=").add(node.value());
      break;
    case ConfigNode::Kind::Sequence:
      h.add("[");
      for (const ConfigNode& item : node.items()) add_document(h, item);
      h.add("]");
      break;
    case ConfigNode::Kind::Map:
      h.add("{");
      for (const auto& entry : node.entries()) {
        h.add(entry.key);
        add_document(h, entry.value);
      }
      h.add("}");
      break;
  }
}

// The machine as the loader reads it: its files (the `base:` chain, a cluster's node file) merged
// and its overrides applied.
ConfigNode machine_document(const Machine& m) {
  ConfigNode doc = m.document ? *m.document
                              : topo::load_chain(topo::shipped_topologies().resolve(m.topology, "", Origin{}));
  return topo::machine_document(std::move(doc), m.overrides);
}

}  // namespace

std::string build_fingerprint() {
  static const std::string fingerprint = [] {
    Fnv1a h;
    h.add(file_bytes("/proc/self/exe"));
    add_folder(h, compute::shipped_gpus().dir());
    add_folder(h, wl::shipped_frameworks().dir());
    add_folder(h, wl::shipped_datasets().dir());
    h.add(file_bytes(compute::shipped_analytic_params_path()));
    return h.hex();
  }();
  return fingerprint;
}

std::string hash_text(std::string_view text) { return Fnv1a().add(text).hex(); }

std::string run_hash(const Run& run, const std::string& build_fingerprint) {
  const sim::Experiment& e = run.experiment;
  const sim::Configuration& c = run.config;
  Fnv1a h;
  h.add(build_fingerprint);
  h.add(run.machine.label);
  add_document(h, machine_document(run.machine));
  add_document(h, wl::load_workload_document(c.workload, {}));
  h.add(c.comm).add(std::to_string(c.batch)).add(std::to_string(c.gpus));
  h.add(e.routing).add(e.protocol).add(e.scaling == sim::Scaling::Weak ? "weak" : "strong");
  // An unset override hashes apart from every value: the framework file's bytes decide it.
  auto override_text = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.17g}", *v) : std::string("framework");
  };
  h.add(std::to_string(e.images)).add(override_text(e.fusion_mb));
  h.add(override_text(e.fusion_cycle_ms)).add(std::to_string(e.iterations));
  h.add(std::to_string(e.samples)).add(std::to_string(e.seed));
  h.add(e.decode_threads ? std::to_string(*e.decode_threads) : std::string("framework"));
  if (e.input_pipeline == "dali") h.add("input_pipeline=dali");  // runs hashed before it kept theirs
  // Only a split adds to the hash, so that runs without one keep the hashes they had.
  if (sim::spatial_ways(e, c) > 1) h.add("spatial").add(std::to_string(sim::spatial_ways(e, c)));
  // Likewise a precision asked for (the workload's own is in its document, hashed above).
  if (!e.precision.empty()) h.add("precision").add(e.precision);
  h.add(e.profile.empty() ? "" : file_bytes(e.profile));
  h.add(file_bytes(wl::shipped_frameworks().resolve(e.framework, "", Origin{})));
  for (const std::string& mechanism : e.without) h.add("without").add(mechanism);
  return h.hex();
}

}  // namespace gpuscale::sweep
