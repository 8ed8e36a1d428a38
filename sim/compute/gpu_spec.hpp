// A GPU model's datasheet figures: memory, memory bandwidth and the fraction of it a copy
// reaches, peak FLOP rates per precision. One YAML file per model in topologies/gpus/, named by
// the `model:` string topology files use, lower-cased (V100-SXM2 -> v100-sxm2.yaml); every
// figure carries its source there. The analytic kernel-time model (kernel_time.hpp) reads them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topologies/core/error.hpp"
#include "topologies/core/shipped_files.hpp"
#include "topologies/core/units.hpp"

namespace gpuscale::compute {

// The arithmetic a kernel runs: FP32 or FP16 on the CUDA cores, or on Tensor Cores with FP32
// accumulation: FP16 inputs (`tensor`, DeepBench's "mixed" precision), TF32 (FP32 data, a 10-bit
// mantissa in the multiply; Ampere on), BF16 (Ampere on), FP8 (E4M3 / E5M2; Hopper on).
enum class Precision { fp32, fp16, tensor, tf32, bf16, fp8 };
inline constexpr int kPrecisionCount = 6;

std::string to_string(Precision p);
std::optional<Precision> precision_from_string(const std::string& name);
std::vector<std::string> precision_names();
// Bytes of one stored element: 4 for fp32 and tf32, 2 for fp16, tensor and bf16, 1 for fp8.
double bytes_per_element(Precision p);
// Whether the arithmetic runs on Tensor Cores (tensor, tf32, bf16, fp8).
bool on_tensor_cores(Precision p);

struct GpuSpec {
  std::string name;                  // the model, as topology files write it: "V100-SXM2"
  std::string description;
  Origin origin;                     // the file it was read from
  Bytes memory;
  BytesPerSecond memory_bandwidth;   // nominal (datasheet)
  double copy_efficiency = 1;        // measured device-to-device copy / nominal, in (0, 1]
  int sm_count = 0;
  // CUDA compute capability, major * 10 + minor (70: Volta); 0 when the file does not give it.
  // NCCL's tuning reads it (sim/collectives/nccl_tuning.hpp).
  int compute_capability = 0;
  Hertz boost_clock;
  FlopsPerSecond peak_fp32;
  FlopsPerSecond peak_fp16;
  // Tensor Core peaks, dense (without 2:4 sparsity); each absent where the GPU has no Tensor
  // Cores for it: `tensor` (FP16) from Volta, `tf32` and `bf16` from Ampere, `fp8` from Hopper.
  std::optional<FlopsPerSecond> peak_tensor;
  std::optional<FlopsPerSecond> peak_tf32;
  std::optional<FlopsPerSecond> peak_bf16;
  std::optional<FlopsPerSecond> peak_fp8;
  // Measured: the share of the 16-bit Tensor Core peak a fused attention kernel (cuDNN's, which
  // Transformer Engine runs on Hopper) reaches in forward and in backward, counting every score
  // (kernel_time.hpp, KernelClass::fused_attention_*); absent: the GEMM efficiency stands for it.
  struct FusedAttention {
    double forward = 0, backward = 0;
  };
  std::optional<FusedAttention> fused_attention;

  // What a streaming kernel can reach: memory_bandwidth x copy_efficiency.
  BytesPerSecond copy_bandwidth() const { return {memory_bandwidth.value * copy_efficiency}; }
  // The peak at `p`; throws ConfigError naming the file when the GPU lacks it (tensor on P100,
  // bf16 on V100).
  FlopsPerSecond peak(Precision p) const;
  bool has(Precision p) const;
};

// A model's name as its spec file is named, lower case ("V100-SXM2" -> "v100-sxm2"): two names
// are the same model when their keys are equal.
std::string gpu_model_key(const std::string& model_name);

// topologies/gpus/, or $GPUSCALE_GPUS_DIR if set.
const ShippedFolder& shipped_gpus();

// A shipped model by name, any case ("V100-SXM2", "v100-sxm2"), or a path to a .yaml file.
// Throws ConfigError: unknown model (listing the shipped ones), missing file, unknown key,
// missing or non-positive figure, a file whose `name:` differs from the model asked for.
// `named_at` is blamed for an unknown model or a missing file: the device line or the option
// that names it (empty: the missing file itself, the message alone for an unknown name).
GpuSpec load_gpu_spec(const std::string& model_name_or_path, const Origin& named_at = Origin{});

}  // namespace gpuscale::compute
