#include "workloads/src/workload_loader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "topologies/core/config_reader.hpp"
#include "workloads/src/batchnorm_fusion.hpp"
#include "workloads/src/dataset.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/layer_reader.hpp"
#include "workloads/src/precision_recipe.hpp"
#include "workloads/src/workload_document.hpp"

namespace gpuscale::wl {
namespace {

constexpr int kMaxTemplateDepth = 32;
constexpr long kMaxRepeat = 10000;
// Nested blocks multiply their repeats: a model that expands past this many layers is a slip
// (the largest shipped, GPT-3 175B, has a few thousand), and would exhaust memory.
constexpr size_t kMaxLayers = 100000;

using Args = std::map<std::string, ConfigNode>;

struct Template {
  std::vector<std::string> args;
  const ConfigNode* layers = nullptr;
};

std::vector<std::string> keys_of(const Args& args) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : args) keys.push_back(key);
  return keys;
}

// Layer names are paths; each scope counts its layers per type for the automatic names.
struct Scope {
  std::string prefix;
  std::map<std::string, int> counters;

  std::string path(const std::string& local) const {
    return prefix.empty() ? local : prefix + "." + local;
  }
  // The name of the next item of kind `base`: its own `name`, or the base and its rank here.
  std::string local_name(const std::string& base, const std::optional<std::string>& given) {
    const int rank = ++counters[base];
    return given ? *given : base + std::to_string(rank);
  }
};

std::vector<std::string> item_names() {
  std::vector<std::string> names = layer_type_names();
  names.insert(names.end(), {"concat", "residual", "block"});
  return names;
}

class Builder {
 public:
  Builder(Workload& workload, std::map<std::string, Template> templates, Args model_args)
      : w_(workload), templates_(std::move(templates)), model_args_(std::move(model_args)) {}

  // Appends the layers of the list `items`, fed by layer `input`; returns the last one's index.
  int sequence(const ConfigNode& items, Scope& scope, const Args& args, int input, int depth) {
    if (!items.is_sequence()) {
      throw ConfigError(items.origin(), "a layer list must be a sequence ('- conv: {...}' items)");
    }
    int last = input;
    for (const ConfigNode& raw : items.items()) last = item(substitute(raw, args), scope, args, last, depth);
    return last;
  }

  // Model arguments no layer uses: a misspelt `--set args.NAME` or a leftover in the file. One
  // whose name is near a used argument's is taken for a misspelling of it.
  void check_model_args_used() const {
    const std::vector<std::string> used(used_.begin(), used_.end());
    for (const auto& [name, value] : model_args_) {
      if (used_.contains(name)) continue;
      if (const auto near = nearest_name(name, used)) {
        throw ConfigError(value.origin(), fmt::format("unknown model argument '{}' (did you mean "
                                                      "'{}'?)", name, *near));
      }
      throw ConfigError(value.origin(), fmt::format("model argument '{}' is used by no layer (the "
                                                    "model's arguments: {})", name,
                                                    fmt::join(keys_of(model_args_), ", ")));
    }
  }

  int add_input(const Shape& shape, const Origin& origin) {
    Layer data;
    data.name = "data";
    data.type = LayerType::Input;
    data.output = shape;
    data.origin = origin;
    return append(std::move(data));
  }

 private:
  // A copy of `node` with every scalar written `$name` replaced by that argument's value (which
  // keeps the origin where the argument was given).
  ConfigNode substitute(const ConfigNode& node, const Args& args) {
    if (node.is_scalar()) {
      if (!node.value().starts_with('$')) return node;
      const std::string name = node.value().substr(1);
      if (auto it = args.find(name); it != args.end()) {
        used_.insert(name);
        return it->second;
      }
      throw ConfigError(node.origin(),
                        unknown_name_message("argument", node.value(), keys_of(args)) +
                            " (declare it in the template's args: or the model's args:)");
    }
    ConfigNode copy = node;
    for (ConfigNode& item : copy.items()) item = substitute(item, args);
    for (auto& entry : copy.entries()) entry.value = substitute(entry.value, args);
    return copy;
  }

  int item(const ConfigNode& node, Scope& scope, const Args& args, int input, int depth) {
    // A bare `- relu` has no hyper-parameters: an empty mapping where the layer is written, so
    // that a type with required ones (`- conv`) says which it lacks, and where.
    const ConfigNode no_params = ConfigNode::map(node.origin());
    std::string type;
    const ConfigNode* params = &no_params;
    if (node.is_scalar()) {
      type = node.value();
    } else if (node.is_map() && node.entries().size() == 1) {
      type = node.entries()[0].key;
      params = &node.entries()[0].value;
    } else {
      throw ConfigError(node.origin(), "a layer is a type name or a one-key mapping from its type "
                                       "to its hyper-parameters (e.g. '- conv: {filters: 64, "
                                       "kernel: 3}')");
    }
    if (params->is_null() || (params->is_scalar() && params->value().empty())) params = &no_params;
    const Origin& origin = node.origin();
    if (type == "concat") return concat(*params, origin, scope, args, input, depth);
    if (type == "residual") return residual(*params, origin, scope, args, input, depth);
    if (type == "block") return block(*params, origin, scope, input, depth);
    const auto layer_type = layer_type_from_string(type);
    if (!layer_type) {
      throw ConfigError(node.is_map() ? node.entries()[0].where() : origin,
                        unknown_name_message("layer type", type, item_names()));
    }
    LayerItem read = read_layer_item(*layer_type, *params, fmt::format("{} layer", type));
    Layer layer;
    layer.name = scope.path(scope.local_name(type, read.name));
    layer.type = *layer_type;
    layer.params = read.params;
    layer.origin = origin;
    const int source =
        read.from ? earlier_layer(*read.from, "from", scope, layer.name, origin) : input;
    layer.inputs = {source};
    layer.input = w_.layers[source].output;
    if (read.memory) {
      const int memory = earlier_layer(*read.memory, "memory", scope, layer.name, origin);
      const Shape& keys = w_.layers[memory].output;
      if (keys.channels != layer.input.channels) {
        throw ConfigError(origin, fmt::format("layer '{}': its memory '{}' has {} channels, its "
                                              "queries {} (they must match)", layer.name,
                                              w_.layers[memory].name, keys.channels,
                                              layer.input.channels));
      }
      layer.inputs.push_back(memory);
    }
    layer.output = infer_output_shape(layer, layer.input);
    if (read.shares) {
      share_weight(layer, earlier_layer(*read.shares, "shares", scope, layer.name, origin));
    }
    return append(std::move(layer));
  }

  // The index of the earlier layer `name` (a path from this scope, or from the top) that the key
  // `key` of layer (or concat branch) `who`, written at `origin`, names.
  int earlier_layer(const std::string& name, const char* key, const Scope& scope,
                    const std::string& who, const Origin& origin) const {
    for (const std::string& path : {scope.path(name), name}) {
      if (const auto it = index_.find(path); it != index_.end()) return it->second;
    }
    std::vector<std::string> known;
    for (const auto& [path, index] : index_) known.push_back(path);
    const auto near = nearest_name(name, known);
    throw ConfigError(origin, fmt::format("layer '{}': {} '{}' names no earlier layer{}", who, key,
                                          name, near ? fmt::format(" (did you mean '{}'?)", *near)
                                                     : ""));
  }

  // Tied weights: `layer` uses the weight of `owner` (or of the layer that one shares), which
  // must hold as many elements, and its bias when both have one; a bias of its own beside a
  // shared weight is refused, so that every parameter belongs to exactly one layer.
  void share_weight(Layer& layer, int owner) const {
    if (w_.layers[owner].shares >= 0) owner = w_.layers[owner].shares;
    const double mine = weight_elements(layer);
    const double theirs = weight_elements(w_.layers[owner]);
    if (theirs == 0 || mine != theirs) {
      throw ConfigError(layer.origin,
                        fmt::format("layer '{}': it cannot share the weight of '{}' ({:.0f} "
                                    "elements against its own {:.0f}; they must be equal)",
                                    layer.name, w_.layers[owner].name, theirs, mine));
    }
    const auto has_bias = [](const Layer& l) {
      return l.params.bias && (l.type == LayerType::Conv || l.type == LayerType::Fc);
    };
    const Layer& o = w_.layers[owner];
    if (has_bias(layer) != has_bias(o) ||
        (has_bias(layer) && layer.params.filters != o.params.filters)) {
      throw ConfigError(layer.origin, fmt::format("layer '{}': it shares the weight of '{}' but "
                                                  "not a bias of the same size (give both a bias "
                                                  "of as many outputs, or neither)",
                                                  layer.name, o.name));
    }
    layer.shares = owner;
  }

  int concat(const ConfigNode& params, const Origin& origin, Scope& scope, const Args& args,
             int input, int depth) {
    MapReader r(params, "concat", {"name", "branches"});
    const std::optional<std::string> given = r.optional_string("name");
    const std::string name = scope.path(scope.local_name("concat", given));
    const ConfigNode& branches = r.require("branches", "{b1: [...], b2: [...]}");
    if (!branches.is_map() || branches.entries().empty()) {
      throw ConfigError(branches.origin(), fmt::format("branches of concat '{}' must map branch "
                                                       "names to layer lists", name));
    }
    Layer join;
    join.name = name;
    join.type = LayerType::Concat;
    join.origin = origin;
    std::string first_branch;
    for (const auto& branch : branches.entries()) {
      Scope inner{given ? name + "." + branch.key : scope.path(branch.key), {}};
      // A branch written `{from: NAME}` is that earlier layer's output as it is.
      const int out = branch.value.is_map()
                          ? earlier_layer(MapReader(branch.value, "concat branch", {"from"})
                                              .string("from", "attention1"),
                                          "from", scope, name, branch.where())
                          : sequence(branch.value, inner, args, input, depth);
      const Shape& shape = w_.layers[out].output;
      if (join.inputs.empty()) {
        first_branch = branch.key;
        join.input = shape;
        join.output = shape;
      } else if (shape.height != join.input.height || shape.width != join.input.width) {
        throw ConfigError(branch.where(),
                          fmt::format("concat '{}': branch '{}' gives {}x{} but branch '{}' gives "
                                      "{}x{} (all branches must keep the same height and width)",
                                      name, branch.key, shape.height, shape.width, first_branch,
                                      join.input.height, join.input.width));
      } else {
        join.output.channels += shape.channels;
      }
      join.inputs.push_back(out);
    }
    return append(std::move(join));
  }

  int residual(const ConfigNode& params, const Origin& origin, Scope& scope, const Args& args,
               int input, int depth) {
    MapReader r(params, "residual", {"name", "body", "projection", "scale"});
    const std::optional<std::string> given = r.optional_string("name");
    Scope named{given ? scope.path(*given) : "", {}};
    Scope& body_scope = given ? named : scope;
    const int body = sequence(r.require("body", "[conv: {...}, batchnorm, ...]"), body_scope, args,
                             input, depth);
    // Copies: the projection below appends layers, which may move every layer in memory.
    const Shape in = w_.layers[input].output;
    const Shape out = w_.layers[body].output;
    int shortcut = input;
    if (!(out == in)) {
      const ConfigNode* projection = r.find("projection");
      if (projection == nullptr) {
        throw ConfigError(origin, fmt::format("residual in '{}': the body turns {} into {}, so the "
                                              "shortcut needs a 'projection' (e.g. a 1x1 strided "
                                              "conv)", scope.prefix.empty() ? "the model" : scope.prefix,
                                              to_string(in), to_string(out)));
      }
      const int rank = ++body_scope.counters["projection"];
      Scope proj{body_scope.path(rank == 1 ? "projection" : "projection" + std::to_string(rank)), {}};
      shortcut = sequence(*projection, proj, args, input, depth);
      if (!(w_.layers[shortcut].output == out)) {
        throw ConfigError(projection->origin(),
                          fmt::format("projection '{}' gives {} but the residual body gives {} "
                                      "(make them match)", proj.prefix,
                                      to_string(w_.layers[shortcut].output), to_string(out)));
      }
    }
    Layer add;
    add.name = body_scope.path(given ? "add" : body_scope.local_name("add", std::nullopt));
    add.type = LayerType::Add;
    add.inputs = {body, shortcut};
    add.input = out;
    add.output = out;
    add.origin = origin;
    if (const ConfigNode* s = r.find("scale")) {
      add.params.scale = read_number(*s, fmt::format("scale of residual {}", add.name), 0.0, 1e6);
    }
    return append(std::move(add));
  }

  int block(const ConfigNode& params, const Origin& origin, Scope& scope, int input, int depth) {
    if (depth >= kMaxTemplateDepth) {
      throw ConfigError(origin, "templates use each other in a cycle (or nest deeper than 32)");
    }
    MapReader r(params, "block", {"name", "template", "args", "repeat", "first"});
    const std::string template_name = r.string("template", "bottleneck");
    const auto found = templates_.find(template_name);
    if (found == templates_.end()) {
      std::vector<std::string> known;
      for (const auto& [name, t] : templates_) known.push_back(name);
      const std::string fix = known.empty() ? " (the file defines no templates: add it under "
                                              "'templates:')"
                                            : "";
      throw ConfigError(r.require("template", "").origin(),
                        unknown_name_message("template", template_name, known) + fix);
    }
    const Template& t = found->second;
    const std::string name = scope.local_name("block", r.optional_string("name"));
    const std::string what = fmt::format("block '{}' (template '{}')", scope.path(name), template_name);

    Args args = model_args_;
    if (const ConfigNode* given = r.find("args")) read_block_args(*given, t, what, args);
    for (const std::string& arg : t.args) {
      if (const ConfigNode* given = r.find("args"); given == nullptr || given->find(arg) == nullptr) {
        throw ConfigError(origin, fmt::format("{} needs argument '{}' (add it to args:)", what, arg));
      }
    }
    const ConfigNode* repeat_node = r.find("repeat");
    const long repeat =
        repeat_node ? read_integer(*repeat_node, "repeat of " + what, 1, kMaxRepeat) : 1;
    int last = input;
    for (long i = 1; i <= repeat; ++i) {
      Args instance = args;
      if (const ConfigNode* first = r.find("first"); first != nullptr && i == 1) {
        read_block_args(*first, t, what, instance);
      }
      Scope inner{scope.path(repeat_node ? name + "." + std::to_string(i) : name), {}};
      last = sequence(*t.layers, inner, instance, last, depth + 1);
    }
    return last;
  }

  static void read_block_args(const ConfigNode& given, const Template& t, const std::string& what,
                              Args& args) {
    if (!given.is_map()) {
      throw ConfigError(given.origin(), fmt::format("args of {} must map names to values", what));
    }
    for (const auto& entry : given.entries()) {
      if (std::find(t.args.begin(), t.args.end(), entry.key) == t.args.end()) {
        throw ConfigError(entry.where(), fmt::format("{} takes no argument '{}' ({})", what,
                                                     entry.key, name_hint(entry.key, t.args)));
      }
      args[entry.key] = entry.value;
    }
  }

  int append(Layer layer) {
    if (w_.layers.size() >= kMaxLayers) {
      throw ConfigError(layer.origin, fmt::format("the model expands to more than {} layers here "
                                                  "(nested blocks multiply their repeats: lower "
                                                  "one)",
                                                  kMaxLayers));
    }
    if (!index_.emplace(layer.name, static_cast<int>(w_.layers.size())).second) {
      throw ConfigError(layer.origin, fmt::format("two layers are named '{}' (give one of them "
                                                  "another 'name')", layer.name));
    }
    check_tensor_sizes(layer);
    w_.layers.push_back(std::move(layer));
    return static_cast<int>(w_.layers.size()) - 1;
  }

  Workload& w_;
  std::map<std::string, Template> templates_;
  Args model_args_;
  std::map<std::string, int> index_;  // layer name -> index in w_.layers
  std::set<std::string> used_;  // argument names some `$name` referred to
};

std::map<std::string, Template> read_templates(const ConfigNode* node) {
  std::map<std::string, Template> templates;
  if (node == nullptr) return templates;
  if (!node->is_map()) {
    throw ConfigError(node->origin(), "'templates' must map template names to {args:, layers:}");
  }
  for (const auto& entry : node->entries()) {
    const std::string what = fmt::format("template '{}'", entry.key);
    if (layer_type_from_string(entry.key)) {
      throw ConfigError(entry.where(), fmt::format("{} has the name of a layer type (rename it)", what));
    }
    MapReader r(entry.value, what, {"args", "layers"});
    Template t;
    if (const ConfigNode* args = r.find("args")) {
      if (!args->is_sequence()) {
        throw ConfigError(args->origin(), fmt::format("args of {} must be a list of names", what));
      }
      for (const ConfigNode& arg : args->items()) t.args.push_back(read_string(arg, "argument name"));
    }
    t.layers = &r.require("layers", "[conv: {...}, relu]");
    templates[entry.key] = t;
  }
  return templates;
}

Args read_model_args(const ConfigNode* node) {
  Args args;
  if (node == nullptr) return args;
  if (!node->is_map()) throw ConfigError(node->origin(), "'args' must map argument names to values");
  for (const auto& entry : node->entries()) {
    if (!entry.value.is_scalar()) {
      throw ConfigError(entry.value.origin(), fmt::format("argument '{}' must be a single value", entry.key));
    }
    args[entry.key] = entry.value;
  }
  return args;
}

Shape read_input(const ConfigNode& node) {
  MapReader r(node, "input", {"channels", "height", "width"});
  return {read_integer(r.require("channels", "3"), "channels of input", 1, 1L << 20),
          read_integer(r.require("height", "224"), "height of input", 1, 1L << 20),
          read_integer(r.require("width", "224"), "width of input", 1, 1L << 20)};
}

}  // namespace

const std::vector<std::string>& workload_file_keys() {
  static const std::vector<std::string> keys = {
      "name",   "description", "source", "published_params", "framework", "dataset",
      "input",  "precision",   "args",   "templates",        "layers",    "fusions"};
  return keys;
}

namespace {

// The framework a workload document names, looked up now (a path from its file's folder);
// empty if it names none.
std::string framework_named(const ConfigNode* node) {
  if (node == nullptr) return "";
  const std::string folder = folder_of(node->origin());
  const std::string name = read_string(*node, "framework");
  shipped_frameworks().resolve(name, folder, node->origin());  // else a hint
  return file_or_name(name, folder);
}

// A workload's `fusions:` list (batchnorm_fusion.hpp).
BatchNormFusions read_fusions(const ConfigNode& node) {
  if (!node.is_sequence()) {
    throw ConfigError(node.origin(),
                      "fusions: give a list, e.g. [batchnorm_relu, batchnorm_add_relu]");
  }
  BatchNormFusions fusions;
  for (const ConfigNode& item : node.items()) {
    const std::string name = read_string(item, "fusion");
    if (name == "batchnorm_relu") {
      fusions.relu = true;
    } else if (name == "batchnorm_add_relu") {
      fusions.add_relu = true;
    } else {
      throw ConfigError(item.origin(),
                        unknown_name_message("fusion", name, batchnorm_fusion_names()));
    }
  }
  return fusions;
}

}  // namespace

std::string framework_for(const std::string& model, const std::string& asked,
                          const std::vector<std::string>& overrides) {
  if (!asked.empty()) return asked;
  const std::string file = shipped_workloads().resolve(model, "", Origin{});
  const ConfigNode doc = load_workload_document(file, overrides);
  const std::string named = framework_named(doc.is_map() ? doc.find("framework") : nullptr);
  return named.empty() ? "mxnet" : named;
}

Workload load_workload(const std::string& name_or_path, const std::vector<std::string>& overrides) {
  // The file named, not the base it derives from (whose root the merged document keeps).
  const std::string file = shipped_workloads().resolve(name_or_path, "", Origin{});
  const ConfigNode doc = load_workload_document(file, overrides);
  MapReader r(doc, "workload file", workload_file_keys());
  Workload w;
  w.file = file;
  w.name = r.name("name", "resnet-50");
  w.description = r.optional_string("description").value_or("");
  w.source = r.optional_string("source").value_or("");
  if (const ConfigNode* p = r.find("published_params")) {
    w.published_params = read_integer(*p, "published_params", 1, 1L << 50);
  }
  framework_named(r.find("framework"));  // checked here; framework_for reads it
  const ConfigNode& dataset = r.require("dataset", "imagenet");
  // A path is taken from the folder of the file that names it (this one or its base), as `base:`
  // paths are; a known name stays a name.
  const std::string dataset_folder = folder_of(dataset.origin());
  const std::string dataset_name = read_string(dataset, "dataset");
  shipped_datasets().resolve(dataset_name, dataset_folder, dataset.origin());  // else a hint
  w.dataset = file_or_name(dataset_name, dataset_folder);
  if (const ConfigNode* p = r.find("precision")) {
    set_precision(w, read_string(*p, "precision"), p->origin());
  }
  const ConfigNode& input = r.require("input", "{channels: 3, height: 224, width: 224}");
  const Args model_args = read_model_args(r.find("args"));
  Builder builder(w, read_templates(r.find("templates")), model_args);
  const int data = builder.add_input(read_input(input), input.origin());
  Scope top;
  const ConfigNode& layers = r.require("layers", "[conv: {...}, relu, ...]");
  builder.sequence(layers, top, model_args, data, 0);
  builder.check_model_args_used();
  if (w.layers.size() < 2) throw ConfigError(layers.origin(), "a model needs at least one layer");
  if (const ConfigNode* f = r.find("fusions")) fuse_batchnorms(w, read_fusions(*f));
  return w;
}

}  // namespace gpuscale::wl
