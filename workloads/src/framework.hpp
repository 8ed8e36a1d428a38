// The framework a workload trains with: how one training iteration executes on the host and the
// GPUs (its threads, what each GPU operation costs the host, where it synchronises, which
// gradient-exchange methods it has and how its allreduce groups gradients) and what it keeps in
// GPU memory. One description per framework (workloads/frameworks/NAME.yaml). What each exchange
// method does is sim/exchange's (one class per method); the replay (sim/replay), the memory
// model and `workload show` ask the method, which reads these settings.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topologies/core/error.hpp"
#include "topologies/core/shipped_files.hpp"
#include "topologies/core/units.hpp"
#include "topologies/src/topology_config.hpp"
#include "workloads/src/precision_recipe.hpp"

namespace gpuscale::wl {

// A model parameter that is either sourced (A) or fitted on the framework's calibration set
// (B), in which case it carries the range sources allow; a fitted value outside it means a
// missing mechanism, never a wider range. Q is Seconds or Bytes.
template <typename Q>
struct ModelParameter {
  Q value;
  bool fitted = false;
  Q low, high;  // fitted only
  std::string name;
  Origin origin;  // its line in the framework file (`gpuscale fit` rewrites the value there)
};
using HostCost = ModelParameter<Seconds>;

// Any parameter of a framework, unit-free, for the fit and the reports.
enum class ParameterUnit { Seconds, Bytes };
struct ParameterView {
  std::string name;
  ParameterUnit unit = ParameterUnit::Seconds;
  double value = 0, low = 0, high = 0;  // seconds or bytes
  bool fitted = false;
  Origin origin;
};
// "15.49 us", "868 MB": how the fit writes a value back and the reports print it.
std::string format_parameter(ParameterUnit unit, double value);

struct HostCosts {
  HostCost kernel_launch;   // per kernel, on the launching thread
  HostCost stream_sync;     // cudaStreamSynchronize round trip once the GPU is done
  HostCost python_per_gpu;  // Python thread, per GPU and iteration (forward/backward calls, slice)
  HostCost metric_sync;     // Python thread, per GPU and iteration: blocking metric read-back
  HostCost engine_op;       // engine worker, per operation beyond launches and the sync
  HostCost python_per_key;  // Python thread, per key and iteration (push, updater, pull)

  std::vector<const HostCost*> all() const;
  std::vector<HostCost*> all();
};

// The training loop's program order on the Python thread.
enum class TrainingLoop {
  // MXNet's Module.fit (python/mxnet/module/base_module.py:487-496 at 1.1.0): forward and backward
  // issued, then update() pushes and pulls every key, then update_metric reads each GPU's output.
  MxnetModuleFit,
  // pytorch/examples imagenet/main.py: forward issued, the loss read back (waiting for the
  // forward), backward issued, then optimizer.step() once backward() has returned.
  PytorchMain
};

// When an allreduce's optimizer updates a weight (the kvstore methods update each key once it is
// exchanged, whatever this says; sim/exchange/allreduce_method.hpp).
enum class UpdateTiming {
  // Each weight once its own gradient is exchanged: MXNet's engine runs a key's update as soon as
  // the key's pull is done.
  PerKey,
  // Every weight once every gradient is exchanged, the issuing thread waiting on the host:
  // Horovod's step() synchronizes every handle before the optimizer runs
  // (horovod/torch/__init__.py:164-214 at v0.19.1).
  AfterEveryExchangeOnHost,
  // Every weight once every gradient is exchanged, the GPU stream waiting: DDP's reducer makes
  // the stream wait for each bucket's allreduce at the end of backward (finalize_backward,
  // torch/csrc/distributed/c10d/reducer.cpp at v1.6.0), and the thread issues optimizer.step()
  // once backward() has returned, without waiting for the GPU.
  AfterEveryExchangeOnStream
};

struct ExecutionModel {
  bool process_per_gpu = false;  // false: one Python process drives every GPU of a node
  int gpu_compute_workers = 2;   // engine threads per GPU running kernels
  int gpu_copy_workers = 2;      // engine threads per GPU running copies
  int bulk_segment_ops = 15;     // forward/backward ops per engine operation (one sync each)
  bool cudnn_autotune = false;   // times every cuDNN algorithm of each convolution once per run
  // The issuing thread waits for each operation's GPU work (MXNet 1.x's cudaStreamSynchronize)
  // before the next; false: it issues and moves on, the GPU stream keeps the order (PyTorch).
  bool sync_after_op = true;
  TrainingLoop training_loop = TrainingLoop::MxnetModuleFit;
  UpdateTiming updates = UpdateTiming::PerKey;
};

// How the allreduce method groups gradients into collectives (sim/exchange: horovod_fusion.cpp,
// ddp_buckets.cpp, per_tensor_allreduce.cpp; docs/replay.md, "Gradient exchange").
enum class AllreduceGrouping {
  // Horovod (<= 0.20): every `cycle` the gradients handed over so far, in that order, packed into
  // buffers of at most `buffer` bytes (a larger tensor alone), allreduced one after another.
  FusionCycle,
  // PyTorch DistributedDataParallel (>= 1.6): static buckets over the gradients in the order they
  // become ready, the first closed at `first_bucket` bytes, the others at `buffer`.
  Buckets
};

struct AllreduceModel {
  AllreduceGrouping grouping = AllreduceGrouping::FusionCycle;
  Bytes buffer{64.0 * 1024 * 1024};  // fusion buffer or bucket cap; 0: one allreduce per tensor
  Seconds cycle{5e-3};               // FusionCycle only; 0: no sleep between cycles
  Bytes first_bucket{0};             // Buckets only

  // The rules of the two groupings, which the replay applies as gradients become ready and the
  // Chakra export to a whole list:
  // Buckets: the bytes at which the iteration's bucket `index` (0: the first) closes.
  double bucket_limit_bytes(int index) const { return index == 0 ? first_bucket.value : buffer.value; }
  // FusionCycle: whether a tensor of `bytes` joins a buffer of `held_tensors` tensors and
  // `held_bytes` (a tensor larger than the buffer goes alone).
  bool joins_fusion_buffer(int held_tensors, double held_bytes, double bytes) const {
    return held_tensors == 0 || held_bytes + bytes <= buffer.value;
  }
};

struct InputPipeline {
  // Where images are decoded: on the CPU (decode and augmentation on the decode threads), or on
  // the GPU (DALI's "mixed" decoder: the decode threads Huffman-decode, the GPU does the rest).
  bool on_gpu = false;
  int decode_threads = 4;    // per process; on_gpu: per GPU (each GPU has its own DALI pipeline)
  int prefetch_batches = 4;  // decoded batches the iterator may hold ahead
  Bytes decoder_buffer{0};   // on_gpu: the nvJPEG device buffer each decode thread keeps
};

// A point of a validation suite: the suite's name and the point's id
// ("throughput/ResNet-50/MXNet/1gpu/b1", validation/src/suite.hpp).
struct SuitePoint {
  std::string suite, id;
  auto operator<=>(const SuitePoint&) const = default;
};

// The declared calibration set: the validation points the fitted (B) parameters are fitted on
// (`gpuscale fit`); every other point of every suite is validation. `fitted_on` and
// `residuals_pct` are the last fit's provenance, written into the file by `gpuscale fit`.
struct Calibration {
  std::string set;                 // in words, with its source
  std::vector<SuitePoint> points;  // in file order
  std::string fitted_on;           // the date of the last fit; empty: never fitted
  std::vector<std::pair<SuitePoint, double>> residuals_pct;  // per point, at that fit

  bool has_point(const std::string& suite_name, const std::string& point_id) const;
};

struct FrameworkConfig {
  std::string name;
  std::string description;
  std::string file;       // where it was read from
  ModelParameter<Bytes> context;  // CUDA context, libraries and framework start-up, per GPU
  Bytes workspace_limit;  // the most cuDNN workspace a convolution may take
  int optimizer_state_per_param = 1;  // arrays the optimizer keeps per parameter array
  bool update_on_kvstore = true;      // the reducing GPU runs the optimizer (MXNet kvstore)
  bool relu_in_place = false;         // a ReLU's output overwrites its input (keeps nothing)
  bool add_in_place = false;          // a residual add's output overwrites its body's output
  ExecutionModel execution;
  HostCosts host;
  InputPipeline input;
  // Its DALI pipeline, which --input-pipeline dali puts in place of `input`; absent: it has none.
  std::optional<InputPipeline> dali_input;
  // The gradient-exchange methods it has (sim/exchange/registry.hpp names them), each with the
  // line that lists it.
  std::vector<std::pair<std::string, Origin>> exchange_methods;
  // How the framework's own GPU-to-GPU copies (the kvstore_device exchange, not a library's
  // collectives) travel between GPUs without peer access; empty: as the machine routes them.
  std::optional<topo::RoutingMode> copies_without_peer_access;
  AllreduceModel allreduce;  // how the allreduce method groups gradients
  // What each --precision name runs as in this framework (`precision:`; fp32 always).
  std::vector<PrecisionRecipe> precision_recipes;
  Calibration calibration;

  // Every parameter that may be fitted (the context and the host costs), in file order, and
  // setting one by name (SI units); `gpuscale fit` works on these.
  std::vector<ParameterView> parameters() const;
  void set_parameter(const std::string& name, double value);
  // Whether it lists the exchange method `name`.
  bool has_exchange_method(const std::string& name) const;
  // The recipe `workload` trains at (Workload::recipe); throws ConfigError at the line or
  // option that named it when this framework lacks it.
  const PrecisionRecipe& precision_of(const Workload& workload) const;
};

// The shipped frameworks: workloads/frameworks/*.yaml, or $GPUSCALE_FRAMEWORKS_DIR if set.
const ShippedFolder& shipped_frameworks();

// A shipped framework or a .yaml file; `named_at` (the line or the option that names it) is
// blamed when nothing matches.
FrameworkConfig load_framework(const std::string& name_or_path, const Origin& named_at = Origin{});

}  // namespace gpuscale::wl
