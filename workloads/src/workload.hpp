// A DNN model as gpuscale sees it (docs/workload-schema.md): a graph of layers in forward order,
// each with its hyper-parameters and inferred output shape. The loader builds it from a workload
// file; costs, the iteration graph and the memory model read it. No YAML here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topologies/core/error.hpp"

namespace gpuscale::wl {

enum class LayerType {
  Input,  // the batch of samples; always layer 0
  Conv,
  Fc,
  Pool,
  Relu,
  Tanh,
  Lrn,
  BatchNorm,
  Dropout,
  Softmax,
  Upsample,
  PixelShuffle,
  Embedding,  // a table lookup: one row per integer id of its input
  Attention,  // multi-head attention over its input, or over a second input (cross-attention)
  Lstm,
  LayerNorm,
  RoiAlign,   // a stand-in: crops a stated number of regions of its input to size x size each
  Glu,        // a gated linear unit: act(first half of the channels) x second half
  Concat,  // the join of a `concat` item's branches
  Add      // the join of a `residual` item
};

const char* to_string(LayerType type);

// Per-sample tensor shape: channels x height x width (a vector is C x 1 x 1).
struct Shape {
  long channels = 0;
  long height = 1;
  long width = 1;

  long elements() const { return channels * height * width; }
  bool operator==(const Shape&) const = default;
};

std::string to_string(const Shape& shape);  // "64x56x56"

enum class PoolKind { Max, Avg };

// Hyper-parameters; each type reads only its own (see the schema's table).
struct LayerParams {
  long filters = 0;   // conv: output channels; fc: outputs; embedding: dim (row length)
  long vocab = 0;     // embedding: rows of the table
  int heads = 1;      // attention
  int kv_heads = 0;   // attention: key and value heads (grouped-query attention); 0: `heads`
  bool additive = false;       // attention: Bahdanau's normalised additive score (GNMT)
  // attention: the core (scores, softmax, P V) runs as one fused kernel that never writes the
  // Tq x Tk scores or probabilities (FlashAttention-2, Dao 2023; cuDNN's fused attention)
  bool fused = false;
  bool bidirectional = false;  // lstm; its hidden size is `filters`
  long rois = 0;      // roi_align: regions per sample; their crops are size x size (kernel_h)
  int kernel_h = 1, kernel_w = 1;
  int stride_h = 1, stride_w = 1;
  int pad_h = 0, pad_w = 0;
  int groups = 1;
  bool bias = true;
  PoolKind pool = PoolKind::Max;
  bool global_pool = false;
  bool ceil = false;   // pool: round output sizes up (Caffe/MXNet "full" convention)
  int lrn_size = 5;
  double dropout_rate = 0.5;
  int factor = 1;      // upsample, pixel_shuffle
  double scale = 1.0;  // add: multiplier of the residual body's output
  // batchnorm: the ReLU after it runs inside it, and with a second input (the addend) the
  // residual sum before that ReLU too (batchnorm_fusion.hpp)
  bool fused_relu = false;
};

struct Layer {
  std::string name;  // a path: "res3.2.conv1"
  LayerType type = LayerType::Input;
  LayerParams params;
  // Indices of earlier layers whose outputs this layer reads: a join's branches; an
  // attention's queries, then its keys and values when they come from another layer.
  std::vector<int> inputs;
  int shares = -1;          // the layer whose weight this one uses (tied weights), else -1
  Shape input;              // the shape of inputs[0] (all inputs of a join share height/width)
  Shape output;
  Origin origin;            // where the layer is written (inside a template: the template's line)
};

// The elements of a convolution's or a fully connected layer's weight tensor, 0 for other layers;
// a double, so that the loader can refuse one too large for cuDNN before an integer holds it.
double weight_elements(const Layer& layer);

// The width of an attention layer's key and value projections: its channels d, or
// d kv_heads / heads with grouped-query attention (Ainslie et al., EMNLP 2023), whose groups of
// query heads share one key and value head.
double attention_kv_width(const Layer& layer);

// The dtype of a workload's activations: FP32, or 16 bits under a mixed-precision recipe.
enum class Precision { Fp32, Fp16 };
int bytes_per_element(Precision precision);
const char* to_string(Precision precision);

struct Workload {
  std::string name;
  std::string description;
  std::string source;
  std::string file;
  std::string dataset;
  // The precision recipe it trains at (wl::PrecisionRecipe: its framework says what the name
  // means), where that was set, and the dtype its activations take under it.
  std::string recipe = "fp32";
  Origin recipe_origin;
  Precision precision = Precision::Fp32;
  std::optional<long> published_params;
  std::vector<Layer> layers;  // layers[0] is the input; the rest in forward (topological) order
};

}  // namespace gpuscale::wl
