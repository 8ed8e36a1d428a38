#include "calibration/tool/convolution.hpp"

#include <fmt/format.h>

#include "calibration/tool/cuda_status.hpp"

namespace gpuscale::calib {
namespace {

using compute::TrainingPass;

constexpr int kMaxAlgorithms = 16;

const char* forward_name(int algo) {
  switch (algo) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "OTHER";
  }
}

const char* backward_data_name(int algo) {
  switch (algo) {
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return "ALGO_0";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1: return "ALGO_1";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "OTHER";
  }
}

const char* backward_weights_name(int algo) {
  switch (algo) {
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0: return "ALGO_0";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1: return "ALGO_1";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3: return "ALGO_3";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING: return "FFT_TILING";
    default: return "OTHER";
  }
}

// The fastest result cuDNN found that ran (results come sorted by time).
template <typename Perf>
ConvAlgorithm fastest(const Perf* results, int count, const char* (*name)(int),
                      const std::string& what) {
  for (int i = 0; i < count; ++i) {
    if (results[i].status != CUDNN_STATUS_SUCCESS) continue;
    ConvAlgorithm a;
    a.algo = static_cast<int>(results[i].algo);
    a.math = results[i].mathType;
    a.name = name(a.algo);
    if (a.math == CUDNN_TENSOR_OP_MATH || a.math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) {
      a.name += "+TC";
    }
    return a;
  }
  throw CudaFailure(fmt::format("cuDNN found no algorithm that runs {} within the workspace "
                                "(raise --workspace)",
                                what));
}

}  // namespace

Convolution::Convolution(GpuContext& ctx, const compute::ConvShape& shape,
                         const DeviceBuffer& workspace, ConvAlgorithmCache& cache)
    : ctx_(ctx),
      shape_(shape),
      workspace_(workspace),
      cache_(cache),
      key_(fmt::format("n{} c{} h{} w{} k{} r{} s{} p{}x{} u{}x{} g{}", shape.batch,
                       shape.in_channels, shape.in_height, shape.in_width, shape.out_channels,
                       shape.filter_height, shape.filter_width, shape.pad_height,
                       shape.pad_width, shape.stride_height, shape.stride_width, shape.groups)),
      x_desc_(ctx.element().cudnn(), shape.batch, shape.in_channels, shape.in_height,
              shape.in_width),
      y_desc_(ctx.element().cudnn(), shape.batch, shape.out_channels, shape.out_height(),
              shape.out_width()) {
  GS_CUDNN(cudnnCreateFilterDescriptor(&w_desc_));
  GS_CUDNN(cudnnSetFilter4dDescriptor(
      w_desc_, ctx.element().cudnn(), CUDNN_TENSOR_NCHW, static_cast<int>(shape.out_channels),
      static_cast<int>(shape.in_channels / shape.groups), static_cast<int>(shape.filter_height),
      static_cast<int>(shape.filter_width)));
  GS_CUDNN(cudnnCreateConvolutionDescriptor(&conv_desc_));
  // FP32 accumulation at both precisions: FP16 data with FP32 compute is cuDNN's "pseudo-half"
  // configuration, the mixed precision frameworks train with.
  GS_CUDNN(cudnnSetConvolution2dDescriptor(
      conv_desc_, static_cast<int>(shape.pad_height), static_cast<int>(shape.pad_width),
      static_cast<int>(shape.stride_height), static_cast<int>(shape.stride_width), 1, 1,
      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  GS_CUDNN(cudnnSetConvolutionGroupCount(conv_desc_, static_cast<int>(shape.groups)));
  GS_CUDNN(cudnnSetConvolutionMathType(conv_desc_, ctx.element().math()));
}

Convolution::~Convolution() {
  if (conv_desc_ != nullptr) cudnnDestroyConvolutionDescriptor(conv_desc_);
  if (w_desc_ != nullptr) cudnnDestroyFilterDescriptor(w_desc_);
}

const ConvAlgorithm& Convolution::choose(TrainingPass pass, const void* a, const void* b,
                                         void* out) {
  const int p = static_cast<int>(pass);
  if (chosen_[p] != nullptr) return *chosen_[p];
  const std::string key = key_ + " " + compute::to_string(pass);
  auto found = cache_.find(key);
  if (found == cache_.end()) {
    // The search may only use the precision's math (no TF32 for FP32).
    GS_CUDNN(cudnnSetConvolutionMathType(conv_desc_, ctx_.element().math()));
    int count = 0;
    ConvAlgorithm chosen;
    switch (pass) {
      case TrainingPass::forward: {
        cudnnConvolutionFwdAlgoPerf_t r[kMaxAlgorithms];
        GS_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(
            ctx_.cudnn(), x_desc_.get(), a, w_desc_, b, conv_desc_, y_desc_.get(), out,
            kMaxAlgorithms, &count, r, workspace_.get(), workspace_.bytes()));
        chosen = fastest(r, count, forward_name, "the forward pass of " + key_);
        break;
      }
      case TrainingPass::backward_data: {
        cudnnConvolutionBwdDataAlgoPerf_t r[kMaxAlgorithms];
        GS_CUDNN(cudnnFindConvolutionBackwardDataAlgorithmEx(
            ctx_.cudnn(), w_desc_, a, y_desc_.get(), b, conv_desc_, x_desc_.get(), out,
            kMaxAlgorithms, &count, r, workspace_.get(), workspace_.bytes()));
        chosen = fastest(r, count, backward_data_name, "the backward-data pass of " + key_);
        break;
      }
      case TrainingPass::backward_weights: {
        cudnnConvolutionBwdFilterAlgoPerf_t r[kMaxAlgorithms];
        GS_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithmEx(
            ctx_.cudnn(), x_desc_.get(), a, y_desc_.get(), b, conv_desc_, w_desc_, out,
            kMaxAlgorithms, &count, r, workspace_.get(), workspace_.bytes()));
        chosen = fastest(r, count, backward_weights_name, "the backward-weights pass of " + key_);
        break;
      }
    }
    found = cache_.emplace(key, chosen).first;
  }
  chosen_[p] = &found->second;
  return found->second;
}

void Convolution::forward(const void* x, const void* w, void* y) {
  const ConvAlgorithm& a = choose(TrainingPass::forward, x, w, y);
  const float one = 1, zero = 0;
  GS_CUDNN(cudnnSetConvolutionMathType(conv_desc_, a.math));
  GS_CUDNN(cudnnConvolutionForward(ctx_.cudnn(), &one, x_desc_.get(), x, w_desc_, w, conv_desc_,
                                   static_cast<cudnnConvolutionFwdAlgo_t>(a.algo),
                                   workspace_.get(), workspace_.bytes(), &zero, y_desc_.get(),
                                   y));
}

void Convolution::backward_data(const void* w, const void* dy, void* dx) {
  const ConvAlgorithm& a = choose(TrainingPass::backward_data, w, dy, dx);
  const float one = 1, zero = 0;
  GS_CUDNN(cudnnSetConvolutionMathType(conv_desc_, a.math));
  GS_CUDNN(cudnnConvolutionBackwardData(ctx_.cudnn(), &one, w_desc_, w, y_desc_.get(), dy,
                                        conv_desc_,
                                        static_cast<cudnnConvolutionBwdDataAlgo_t>(a.algo),
                                        workspace_.get(), workspace_.bytes(), &zero,
                                        x_desc_.get(), dx));
}

void Convolution::backward_weights(const void* x, const void* dy, void* dw) {
  const ConvAlgorithm& a = choose(TrainingPass::backward_weights, x, dy, dw);
  const float one = 1, zero = 0;
  GS_CUDNN(cudnnSetConvolutionMathType(conv_desc_, a.math));
  GS_CUDNN(cudnnConvolutionBackwardFilter(ctx_.cudnn(), &one, x_desc_.get(), x, y_desc_.get(),
                                          dy, conv_desc_,
                                          static_cast<cudnnConvolutionBwdFilterAlgo_t>(a.algo),
                                          workspace_.get(), workspace_.bytes(), &zero, w_desc_,
                                          dw));
}

std::string Convolution::algorithm(TrainingPass pass) const {
  const ConvAlgorithm* a = chosen_[static_cast<int>(pass)];
  return a == nullptr ? "" : a->name;
}

}  // namespace gpuscale::calib
