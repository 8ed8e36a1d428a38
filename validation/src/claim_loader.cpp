#include "validation/src/claim_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "topologies/core/config_reader.hpp"
#include "validation/src/claims.hpp"

namespace gpuscale::validation {
namespace {

const std::vector<std::string> kClaimKeys = {
    "id",           "kind",   "text",           "text_other_slide",
    "source",       "params", "interpretation", "why_not_checked",
    "proposed_kind"};
const std::vector<std::string> kClaimSourceKeys = {"slide", "section", "also"};
const std::string kNotChecked = "not_checked";

using ParamReader = std::function<void(ClaimParams&, const ConfigNode&, const SuiteNames&)>;

std::vector<std::pair<int, int>> read_steps(const ConfigNode& node, const SuiteNames& names) {
  std::vector<std::pair<int, int>> steps;
  for (const ConfigNode* step : items_or_one(node, "steps")) {
    if (!step->is_sequence() || step->items().size() != 2) {
      throw ConfigError(step->origin(), "a step is a pair of GPU counts, e.g. [2, 4]");
    }
    steps.emplace_back(names.gpus(step->items()[0]), names.gpus(step->items()[1]));
  }
  return steps;
}

// `at_least: 2.0` for every GPU count, or `at_least: {2: 1.6, 4: 3.2}` per GPU count.
void read_at_least(ClaimParams& p, const ConfigNode& node, const SuiteNames& names) {
  if (!node.is_map()) {
    p.at_least = read_number(node, "at_least", 0, 1e6);
    return;
  }
  for (const auto& entry : node.entries()) {
    p.at_least_by_gpus[names.gpus(ConfigNode::scalar(entry.key, entry.where()))] =
        read_number(entry.value, "at_least", 0, 1e6);
  }
}

// `message_sizes: [32 MiB, 64 MiB]`: the sizes above the first, up to the second.
void read_message_sizes(ClaimParams& p, const ConfigNode& node, const SuiteNames&) {
  const std::vector<const ConfigNode*> ends = items_or_one(node, "message_sizes");
  if (ends.size() != 2) {
    throw ConfigError(node.origin(),
                      "message_sizes is a range of two sizes, e.g. [32 MiB, 64 MiB]");
  }
  p.message_sizes = {read_bytes(*ends[0], "message_sizes").value,
                     read_bytes(*ends[1], "message_sizes").value};
  if (p.message_sizes.first >= p.message_sizes.second) {
    throw ConfigError(node.origin(), "message_sizes: the first size must be below the second");
  }
}

const std::map<std::string, ParamReader>& param_readers() {
  using P = ClaimParams;
  using N = ConfigNode;
  using S = SuiteNames;
  static const std::map<std::string, ParamReader> readers = {
      {"networks", [](P& p, const N& n, const S& s) { p.networks = s.networks(n); }},
      {"network", [](P& p, const N& n, const S& s) { p.networks = {s.network(n)}; }},
      {"better_than", [](P& p, const N& n, const S& s) { p.better_than = s.networks(n); }},
      {"like", [](P& p, const N& n, const S& s) { p.like = s.network(n); }},
      {"methods", [](P& p, const N& n, const S& s) { p.methods = s.methods(n); }},
      {"method", [](P& p, const N& n, const S& s) { p.methods = {s.method(n)}; }},
      {"faster", [](P& p, const N& n, const S& s) { p.faster = s.method(n); }},
      {"slower", [](P& p, const N& n, const S& s) { p.slower = s.method(n); }},
      // A claim's machine is read before its other params (read_claim): its GPU counts are the
      // machine's.
      {"gpus", [](P& p, const N& n, const S& s) { p.gpus = s.gpu_counts(n, p.machine); }},
      {"machine", [](P& p, const N& n, const S& s) { p.machine = s.machine(n); }},
      {"baseline_machines",
       [](P& p, const N& n, const S& s) { p.baseline_machines = s.machines(n); }},
      {"largest", [](P& p, const N& n, const S& s) { p.largest = s.network(n); }},
      {"max_at_least_pct",
       [](P& p, const N& n, const S&) {
         p.max_at_least_pct = read_number(n, "max_at_least_pct", -1e6, 1e6);
       }},
      {"above_pct",
       [](P& p, const N& n, const S&) { p.above_pct = read_number(n, "above_pct", -1e6, 1e6); }},
      {"to_gpus", [](P& p, const N& n, const S& s) { p.to_gpus = s.gpu_counts(n); }},
      {"from_gpus", [](P& p, const N& n, const S& s) { p.from_gpus = s.gpus(n); }},
      {"batch", [](P& p, const N& n, const S& s) { p.batches = {s.batch(n)}; }},
      {"batches", [](P& p, const N& n, const S& s) { p.batches = s.batches(n); }},
      {"steps", [](P& p, const N& n, const S& s) { p.steps = read_steps(n, s); }},
      {"quantity",
       [](P& p, const N& n, const S&) {
         p.quantity = read_one_of(n, "quantity", {"epoch_time", "speedup"});
       }},
      {"over",
       [](P& p, const N& n, const S&) {
         p.over = read_one_of(n, "over", {"batch", "gpus"});
       }},
      {"within_pct",
       [](P& p, const N& n, const S&) { p.within_pct = optional_number(n, "within_pct", 0, 1e6); }},
      {"margin_pct",
       [](P& p, const N& n, const S&) { p.margin_pct = read_number(n, "margin_pct", 0, 100); }},
      {"decreasing", [](P& p, const N& n, const S&) { p.decreasing = read_bool(n, "decreasing"); }},
      {"strict", [](P& p, const N& n, const S&) { p.strict = read_bool(n, "strict"); }},
      {"at_least", read_at_least},
      {"at_most",
       [](P& p, const N& n, const S&) { p.at_most = read_number(n, "at_most", 0, 1e6); }},
      {"at_most_pct", [](P& p, const N& n,
                         const S&) { p.at_most_pct = read_number(n, "at_most_pct", -1e6, 1e6); }},
      {"at_least_pct",
       [](P& p, const N& n, const S&) {
         p.at_least_pct = read_number(n, "at_least_pct", -1e6, 1e6);
       }},
      {"columns",
       [](P& p, const N& n, const S&) {
         for (const N* item : items_or_one(n, "columns")) {
           p.columns.push_back(read_one_of(*item, "memory column", {"pretrain", "gpu0", "gpux"}));
         }
       }},
      {"largest_trainable_batch",
       [](P& p, const N& n, const S&) {
         p.largest_trainable_batch =
             static_cast<int>(read_integer(n, "largest_trainable_batch", 1, 1 << 24));
       }},
      {"first_failing_batch",
       [](P& p, const N& n, const S&) {
         p.first_failing_batch =
             static_cast<int>(read_integer(n, "first_failing_batch", 1, 1 << 24));
       }},
      {"gpu_memory",
       [](P& p, const N& n, const S&) { p.gpu_memory = read_bytes(n, "gpu_memory"); }},
      {"baseline", [](P& p, const N& n, const S& s) { p.baseline = s.method(n); }},
      {"mini_batches",
       [](P& p, const N& n, const S&) {
         p.mini_batches = read_counts(n, "mini_batches", 1 << 24);
       }},
      {"from_mini_batch",
       [](P& p, const N& n, const S&) {
         p.from_mini_batch = static_cast<int>(read_integer(n, "from_mini_batch", 1, 1 << 24));
       }},
      {"to_mini_batch",
       [](P& p, const N& n, const S&) {
         p.to_mini_batch = static_cast<int>(read_integer(n, "to_mini_batch", 1, 1 << 24));
       }},
      {"fits", [](P& p, const N& n, const S&) { p.fits = read_bool(n, "fits"); }},
      {"message_sizes", read_message_sizes},
  };
  return readers;
}

std::vector<std::string> claim_kinds() {
  std::vector<std::string> kinds = {kNotChecked};
  for (const ClaimForm& f : claim_forms()) {
    if (std::find(kinds.begin(), kinds.end(), f.kind) == kinds.end()) kinds.push_back(f.kind);
  }
  return kinds;
}

bool has_key(const ConfigNode& params, const std::string& key) {
  return params.find(key) != nullptr;
}

// The one form of `kind` whose keys the params hold: every required key, no other than its
// optional ones, and `over` as the form wants.
const ClaimForm& form_of(const std::string& id, const std::string& kind, const ConfigNode& params,
                         const ClaimParams& p) {
  std::vector<const ClaimForm*> forms;
  for (const ClaimForm& f : claim_forms()) {
    if (f.kind == kind) forms.push_back(&f);
  }
  std::vector<std::string> alternatives;
  for (const ClaimForm* f : forms) {
    const bool over_fits = f->over.empty() || f->over == p.over;
    const bool has_required =
        std::all_of(f->required.begin(), f->required.end(),
                    [&](const std::string& key) { return has_key(params, key); });
    const bool has_no_other =
        std::all_of(params.entries().begin(), params.entries().end(), [&](const auto& e) {
          return std::count(f->required.begin(), f->required.end(), e.key) +
                     std::count(f->optional.begin(), f->optional.end(), e.key) >
                 0;
        });
    if (over_fits && has_required && has_no_other) return *f;
    alternatives.push_back(fmt::format(
        "{{{}{}{}}}", f->over.empty() ? "" : "over: " + f->over + "; ",
        fmt::join(f->required, ", "),
        f->optional.empty() ? "" : fmt::format("; optional {}", fmt::join(f->optional, ", "))));
  }
  throw ConfigError(
      params.origin(),
      fmt::format("params of claim '{}' fit no form of kind {} (give the keys of one: {})", id,
                  kind, fmt::join(alternatives, " or ")));
}

// method_speedup: each method trains `mini_batch` samples per iteration at its batch per GPU
// (per group of `spatial` GPUs) on mini_batch x spatial / batch GPUs, a count the setup runs.
void check_mini_batches(Claim& c, const ConfigNode& params, const SuiteNames& names) {
  ClaimParams& p = c.params;
  p.method_spatial = names.suite().spatial_of(p.methods.front());
  p.baseline_spatial = names.suite().spatial_of(p.baseline);
  if (!p.at_least_by_gpus.empty()) {
    throw ConfigError(params.find("at_least")->origin(),
                      fmt::format("claim '{}': at_least of a method_speedup is one value, for "
                                  "every mini-batch",
                                  c.id));
  }
  const char* key = p.mini_batches.empty() ? "from_mini_batch" : "mini_batches";
  std::vector<int> mini_batches = p.mini_batches;
  if (mini_batches.empty()) {
    if (p.from_mini_batch == p.to_mini_batch) {
      throw ConfigError(params.find("to_mini_batch")->origin(),
                        fmt::format("claim '{}': to_mini_batch must differ from from_mini_batch",
                                    c.id));
    }
    mini_batches = {p.from_mini_batch, p.to_mini_batch};
  }
  const std::vector<int>& gpus = names.suite().setup.gpus;
  const int batch = p.batches.front();
  for (int n : mini_batches) {
    for (const auto& [method, ways] : {std::pair{p.methods.front(), p.method_spatial},
                                       std::pair{p.baseline, p.baseline_spatial}}) {
      const long g = static_cast<long>(n) * ways / batch;
      if (static_cast<long>(n) * ways % batch != 0 ||
          std::find(gpus.begin(), gpus.end(), g) == gpus.end()) {
        throw ConfigError(
            params.find(key)->origin(),
            fmt::format("claim '{}': a mini-batch of {} at batch {} puts {} ({} GPU{} per "
                        "sample) on {} GPUs, not a count the setup runs (setup.gpus: {})",
                        c.id, n, batch, method, ways, ways == 1 ? "" : "s",
                        fmt::format("{:g}", static_cast<double>(n) * ways / batch),
                        fmt::join(gpus, ", ")));
      }
    }
  }
}

// Every network, method and batch the claim compares is a run the suite simulates.
void check_runs(const Claim& c, const ConfigNode& params, const SuiteNames& names) {
  const ClaimParams& p = c.params;
  std::vector<std::string> networks = p.networks;
  networks.insert(networks.end(), p.better_than.begin(), p.better_than.end());
  if (!p.like.empty()) networks.push_back(p.like);
  std::vector<std::string> methods = p.methods;
  for (const std::string* m : {&p.faster, &p.slower, &p.baseline}) {
    if (!m->empty()) methods.push_back(*m);
  }
  if (c.kind == "memory_methods_within") {
    for (const NameMapping& m : names.suite().methods) methods.push_back(m.study);
  }
  for (const auto& network : networks) {
    for (const auto& method : methods) {
      if (p.batches.empty()) names.check_run(network, method, std::nullopt, params.origin());
      for (int batch : p.batches) names.check_run(network, method, batch, params.origin());
    }
  }
  // A claim about servers or precisions compares each network on its machine with itself on
  // the baselines, or with its twin; each must be a run of the suite.
  if (!p.largest.empty()) networks.push_back(p.largest);
  if (c.kind == "precision_speedup") {
    for (const auto& network : std::vector<std::string>(networks))
      networks.push_back(names.twin(network, params.origin()));
  }
  std::vector<std::string> machines = p.baseline_machines;
  machines.push_back(p.machine);
  for (const auto& network : networks) {
    for (const auto& machine : machines) {
      names.check_on_machine(network, machine, params.origin());
      for (int g : p.gpus)
        names.gpus(ConfigNode::scalar(std::to_string(g), params.origin()), machine);
    }
  }
}

// machine_gain's range may be open at either end, but says something.
void open_gain_range(Claim& c, const ConfigNode& params) {
  ClaimParams& p = c.params;
  const bool low = params.find("at_least_pct") != nullptr;
  const bool high = params.find("at_most_pct") != nullptr;
  if (!low && !high && !p.max_at_least_pct) {
    throw ConfigError(params.origin(), fmt::format("claim '{}': give at_least_pct, at_most_pct "
                                                   "or max_at_least_pct",
                                                   c.id));
  }
  if (!low) p.at_least_pct = -std::numeric_limits<double>::infinity();
  if (!high) p.at_most_pct = std::numeric_limits<double>::infinity();
}

// What the forms cannot say by their keys alone.
void check_params(const Claim& c, const ConfigNode& params) {
  const ClaimParams& p = c.params;
  for (int g : p.to_gpus) {
    if (!p.at_least_by_gpus.empty() && !p.at_least_by_gpus.contains(g)) {
      throw ConfigError(
          params.find("at_least")->origin(),
          fmt::format("claim '{}': at_least gives no value for {} GPUs (to_gpus lists it)", c.id,
                      g));
    }
  }
  if (c.kind == "precision_speedup" && !p.at_least_by_gpus.empty()) {
    throw ConfigError(params.find("at_least")->origin(),
                      fmt::format("claim '{}': at_least of a precision_speedup is one value, for "
                                  "every GPU count",
                                  c.id));
  }
  if (!p.largest.empty() &&
      std::find(p.networks.begin(), p.networks.end(), p.largest) == p.networks.end()) {
    throw ConfigError(params.find("largest")->origin(),
                      fmt::format("claim '{}': largest must be one of its networks", c.id));
  }
  if (c.kind == "max_batch" && p.first_failing_batch <= p.largest_trainable_batch) {
    throw ConfigError(
        params.find("first_failing_batch")->origin(),
        fmt::format("claim '{}': first_failing_batch must exceed largest_trainable_batch", c.id));
  }
  const bool needs_gpux =
      c.kind == "gpu0_more_memory" || std::count(p.columns.begin(), p.columns.end(), "gpux") > 0;
  if (needs_gpux && std::count(p.gpus.begin(), p.gpus.end(), 1) > 0) {
    throw ConfigError(
        params.find("gpus")->origin(),
        fmt::format("claim '{}': GPUx (a GPU other than GPU0) needs 2 or more GPUs", c.id));
  }
}

void check_source(const ConfigNode& node, const std::string& id) {
  const MapReader map(node, "source of claim " + id, kClaimSourceKeys);
  for (const auto& entry : node.entries()) check_text(entry.value, "source of claim " + id);
}

Claim read_claim(const ConfigNode& node, const SuiteNames& names) {
  const MapReader map(node, "claim", kClaimKeys);
  Claim c;
  c.origin = node.origin();
  c.id = map.string("id", "p2p-faster-lenet");
  c.kind = read_one_of(map.require("kind", "faster"), "claim kind", claim_kinds());
  c.text = map.string("text", "\"the slide's words\"");
  for (const char* key : {"text_other_slide", "interpretation"}) {
    if (const auto* n = map.find(key)) check_text(*n, key);
  }
  if (const auto* n = map.find("source")) check_source(*n, c.id);
  const ConfigNode& params = map.require("params", "{}");
  if (!params.is_map() && !(params.is_scalar() && params.value().empty())) {
    throw ConfigError(params.origin(), fmt::format("params of claim '{}' must be a mapping", c.id));
  }
  const bool checked = c.kind != kNotChecked;
  for (const char* key : {"why_not_checked", "proposed_kind"}) {
    if (checked && map.find(key) != nullptr) {
      throw ConfigError(map.find(key)->origin(),
                        fmt::format("{} applies to kind not_checked only (remove it)", key));
    }
  }
  if (!checked) {
    // A not_checked claim's params describe a kind the harness lacks; they are kept, not read.
    c.why_not_checked = map.string("why_not_checked", "\"fits no kind\"");
    if (const auto* n = map.find("proposed_kind")) read_string(*n, "proposed_kind");
    return c;
  }
  std::vector<std::string> keys;
  for (const ClaimForm& f : claim_forms()) {
    if (f.kind != c.kind) continue;
    keys.insert(keys.end(), f.required.begin(), f.required.end());
    keys.insert(keys.end(), f.optional.begin(), f.optional.end());
  }
  const MapReader params_map(params, fmt::format("params of claim '{}' (kind {})", c.id, c.kind),
                             keys);
  if (const ConfigNode* machine = params.find("machine"))
    param_readers().at("machine")(c.params, *machine, names);
  for (const auto& entry : params.entries()) {
    if (entry.key != "machine") param_readers().at(entry.key)(c.params, entry.value, names);
  }
  c.form = &form_of(c.id, c.kind, params, c.params);
  if (c.kind == "machine_gain") open_gain_range(c, params);
  check_params(c, params);
  if (c.kind == "method_speedup") check_mini_batches(c, params, names);
  check_runs(c, params, names);
  return c;
}

}  // namespace

std::vector<Claim> load_claims(const std::string& path, const SuiteNames& names) {
  const ConfigNode root = ConfigNode::load_file(path);
  const MapReader map(root, "claims file", {"claims"});
  std::vector<Claim> claims;
  std::map<std::string, Origin> seen;
  for (const ConfigNode* item :
       items_or_one(map.require("claims", "[{id: ..., kind: ...}]"), "claims")) {
    Claim claim = read_claim(*item, names);
    const auto [it, inserted] = seen.emplace(claim.id, claim.origin);
    if (!inserted) {
      throw ConfigError(claim.origin, fmt::format("claim '{}' is given twice (first at {})",
                                                  claim.id, it->second.str()));
    }
    claims.push_back(std::move(claim));
  }
  return claims;
}

}  // namespace gpuscale::validation
