// One cuDNN convolution (NCHW, grouped or not) and its three passes, each run with the algorithm
// cuDNN's own search finds fastest for the shape, as frameworks' autotuners do (MXNet's
// cudnn_tune, PyTorch's cudnn.benchmark): cudnnFind*AlgorithmEx on the real buffers, within the
// workspace, the first time a pass runs. Choices are shared through a cache keyed by the shape,
// as a framework reuses its choice for a repeated layer.
#pragma once

#include <cudnn.h>

#include <array>
#include <map>
#include <string>

#include "calibration/tool/gpu_context.hpp"
#include "sim/compute/kernel_time.hpp"

namespace gpuscale::calib {

struct ConvAlgorithm {
  int algo = 0;  // cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t of the pass
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  std::string name;  // "WINOGRAD_NONFUSED", "+TC" appended for Tensor Core math
};

using ConvAlgorithmCache = std::map<std::string, ConvAlgorithm>;

class Convolution {
 public:
  Convolution(GpuContext& ctx, const compute::ConvShape& shape, const DeviceBuffer& workspace,
              ConvAlgorithmCache& cache);
  ~Convolution();
  Convolution(const Convolution&) = delete;
  Convolution& operator=(const Convolution&) = delete;

  void forward(const void* x, const void* w, void* y);
  void backward_data(const void* w, const void* dy, void* dx);
  void backward_weights(const void* x, const void* dy, void* dw);
  // The algorithm chosen for `pass`; "" before that pass has run.
  std::string algorithm(compute::TrainingPass pass) const;

 private:
  const ConvAlgorithm& choose(compute::TrainingPass pass, const void* a, const void* b, void* out);

  GpuContext& ctx_;
  compute::ConvShape shape_;
  const DeviceBuffer& workspace_;
  ConvAlgorithmCache& cache_;
  std::string key_;
  TensorDesc x_desc_;
  TensorDesc y_desc_;
  cudnnFilterDescriptor_t w_desc_ = nullptr;
  cudnnConvolutionDescriptor_t conv_desc_ = nullptr;
  std::array<const ConvAlgorithm*, compute::kTrainingPassCount> chosen_{};
};

}  // namespace gpuscale::calib
