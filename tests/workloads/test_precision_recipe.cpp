// Precision recipes (workloads/src/precision_recipe.hpp) as the shipped frameworks declare them,
// and what the memory model makes of them, in closed form: the bytes per parameter of weights,
// gradients, master weights and optimizer state, and the 16-bit copies of cast weights.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/test_support.hpp"
#include "workloads/src/framework.hpp"
#include "workloads/src/memory_model.hpp"
#include "workloads/src/precision_recipe.hpp"
#include "workloads/src/transformer_layers.hpp"
#include "workloads/src/workload_loader.hpp"

namespace gpuscale::wl {
namespace {

using ::testing::HasSubstr;
using testing::config_error_of;

struct Trained {
  Trained(const std::string& framework, const std::string& precision)
      : f(load_framework(framework)) {
    set_precision(w, precision, Origin{"--precision", 0});
  }
  Workload w = load_workload("resnet-50");
  WorkloadCosts c = compute_costs(w);
  FrameworkConfig f;
  double params() const { return static_cast<double>(c.params); }
  MemoryParts memory() const {
    MemoryOptions o;
    o.batch = 1;
    o.gpus = 1;
    return estimate_memory(w, c, f, o).front();
  }
  double cast_elements() const {
    double n = 0;
    for (const Layer& layer : w.layers) n += cast_weight_elements(layer, f.precision_of(w));
    return n;
  }
};

TEST(PrecisionRecipe, NativeAmpKeepsFp32WeightsAndGradientsAndCastsPerForward) {
  const Trained t("pytorch-ddp", "amp");
  const PrecisionRecipe& r = t.f.precision_of(t.w);
  EXPECT_EQ(r.gradient_bytes, 4);
  EXPECT_EQ(r.weight_bytes, 4);
  EXPECT_FALSE(r.master_weights);
  EXPECT_EQ(r.weight_casts, WeightCasts::per_forward);
  EXPECT_TRUE(r.overflow_sync);
  EXPECT_EQ(r.math_of(LayerType::Conv), Math::fp16);
  EXPECT_EQ(r.math_of(LayerType::Softmax), Math::fp32);  // autocast's FP32 list
  EXPECT_EQ(r.math_of(LayerType::Lstm), Math::fp32);     // no _cudnn_rnn wrapper in 1.6
  EXPECT_EQ(t.w.precision, Precision::Fp16);             // the activations convolutions write
}

TEST(PrecisionRecipe, ApexO2ExchangesHalfTheBytesOfNativeAmp) {
  const Trained amp("pytorch-ddp", "amp");
  const Trained o2("pytorch-ddp", "fp16");
  EXPECT_EQ(amp.f.precision_of(amp.w).gradient_bytes,
            2 * o2.f.precision_of(o2.w).gradient_bytes);
}

// Weights + gradients + optimizer (SGD with momentum: one state array) per parameter.
TEST(PrecisionRecipe, MemoryPerParameterFollowsTheRecipe) {
  const Trained fp32("pytorch-ddp", "fp32");
  EXPECT_DOUBLE_EQ(fp32.memory().weights, 4 * fp32.params());
  EXPECT_DOUBLE_EQ(fp32.memory().gradients, 4 * fp32.params());
  EXPECT_DOUBLE_EQ(fp32.memory().optimizer, 4 * fp32.params());

  // Native AMP: FP32 everything, plus a 16-bit copy of every cast weight (the convolutions' and
  // the classifier's: all of ResNet-50's but batch norm's).
  const Trained amp("pytorch-ddp", "amp");
  EXPECT_GT(amp.cast_elements(), 0.99 * amp.params());
  EXPECT_LT(amp.cast_elements(), amp.params());
  EXPECT_DOUBLE_EQ(amp.memory().weights, 4 * amp.params() + 2 * amp.cast_elements());
  EXPECT_DOUBLE_EQ(amp.memory().gradients, 4 * amp.params());
  EXPECT_DOUBLE_EQ(amp.memory().optimizer, 4 * amp.params());

  // apex O2: FP16 weights and gradients, FP32 master gradients, FP32 masters and momentum.
  const Trained o2("pytorch-ddp", "fp16");
  EXPECT_DOUBLE_EQ(o2.memory().weights, 2 * o2.params());
  EXPECT_DOUBLE_EQ(o2.memory().gradients, (2 + 4) * o2.params());
  EXPECT_DOUBLE_EQ(o2.memory().optimizer, (4 + 4) * o2.params());

  // MXNet --dtype float16, multi_precision SGD: on one GPU (no kvstore) the replica's optimizer
  // holds the FP32 master and momentum.
  const Trained mx("mxnet", "fp16");
  EXPECT_DOUBLE_EQ(mx.memory().weights, 2 * mx.params());
  EXPECT_DOUBLE_EQ(mx.memory().gradients, 2 * mx.params());
  EXPECT_DOUBLE_EQ(mx.memory().optimizer, (4 + 4) * mx.params());
}

TEST(PrecisionRecipe, ARecipeTheFrameworkLacksSaysWhyAndWhatItHas) {
  Workload w = load_workload("lenet");
  set_precision(w, "amp", Origin{"--precision", 0});
  const FrameworkConfig mxnet = load_framework("mxnet");
  const std::string error = config_error_of([&] { mxnet.precision_of(w); });
  EXPECT_THAT(error, HasSubstr("--precision: framework mxnet cannot train at precision amp"));
  EXPECT_THAT(error, HasSubstr("mxnet.contrib.amp came with 1.5.0"));
  EXPECT_THAT(error, HasSubstr("its precisions: fp32, fp16"));
}

TEST(PrecisionRecipe, AnUnknownNameIsRefusedWithTheKnownOnes) {
  Workload w = load_workload("lenet");
  const std::string error = config_error_of([&] { set_precision(w, "fp64", Origin{"x.yaml", 3}); });
  EXPECT_THAT(error, HasSubstr("x.yaml:3: unknown precision 'fp64'"));
}

TEST(PrecisionRecipe, Fp32IsEveryFrameworksDefault) {
  for (const char* framework : {"mxnet", "pytorch-ddp", "pytorch-horovod"}) {
    const Trained t(framework, "fp32");
    const PrecisionRecipe& r = t.f.precision_of(t.w);
    EXPECT_EQ(r.gradient_bytes, 4) << framework;
    EXPECT_FALSE(r.lowers(LayerType::Conv)) << framework;
    EXPECT_EQ(r.update_bytes_per_param, 20) << framework;
  }
}

// Megatron-LM's recipes: BF16 reduces FP32 gradients (arguments.py forces it), FP16 keeps FP16
// ones; FP8 runs the linear layers of the transformer layers in FP8 and the rest at BF16, and
// caches an FP8 copy of those layers' weights only.
TEST(PrecisionRecipe, MegatronFp8IsScopedToTheTransformerLayers) {
  Workload w = load_workload("mcore-gpt-1.7b");
  const FrameworkConfig megatron = load_framework("megatron-lm");
  set_precision(w, "bf16", Origin{"--precision", 0});
  EXPECT_EQ(megatron.precision_of(w).gradient_bytes, 4);
  EXPECT_EQ(megatron.precision_of(w).weight_bytes, 2);
  set_precision(w, "fp16", Origin{"--precision", 0});
  EXPECT_EQ(megatron.precision_of(w).gradient_bytes, 2);
  set_precision(w, "fp8", Origin{"--precision", 0});
  const PrecisionRecipe& fp8 = megatron.precision_of(w);
  const TransformerLayers blocks = transformer_layers(w);
  EXPECT_EQ(blocks.count, 24);
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const Layer& layer = w.layers[i];
    const Math math = fp8.math_of(layer.type, blocks.contains(i));
    const double cast = cast_weight_elements(layer, fp8, blocks.contains(i));
    if (layer.type == LayerType::Conv || layer.type == LayerType::Attention) {
      EXPECT_EQ(math, blocks.contains(i) ? Math::fp8 : Math::bf16) << layer.name;
      EXPECT_EQ(cast > 0, blocks.contains(i)) << layer.name;
    }
    if (layer.type == LayerType::Embedding) {
      EXPECT_EQ(math, Math::bf16) << layer.name;
    }
    if (layer.type == LayerType::Softmax) {
      EXPECT_EQ(math, Math::fp32) << layer.name;
    }
  }
  // The 24 layers' projections (4 d^2) and MLP (8 d^2), d = 2048: every cast weight.
  double cast = 0;
  for (size_t i = 0; i < w.layers.size(); ++i) {
    cast += cast_weight_elements(w.layers[i], fp8, blocks.contains(i));
  }
  EXPECT_DOUBLE_EQ(cast, 24 * 12.0 * 2048 * 2048);
}

TEST(TransformerLayers, Gpt3HasNinetySixBetweenItsEmbeddingsAndItsOutputLayer) {
  const Workload w = load_workload("gpt3-175b");
  const TransformerLayers blocks = transformer_layers(w);
  EXPECT_EQ(blocks.count, 96);
  EXPECT_EQ(blocks.of[1], -1);  // the token embedding
  EXPECT_EQ(blocks.of.back(), 96);  // the loss
  EXPECT_FALSE(blocks.contains(w.layers.size() - 1));
  EXPECT_EQ(transformer_layers(load_workload("resnet-50")).count, 0);
}

}  // namespace
}  // namespace gpuscale::wl
