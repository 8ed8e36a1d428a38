#include "calibration/tool/layer_ops.hpp"

#include <fmt/format.h>

#include "calibration/tool/cuda_status.hpp"
#include "calibration/tool/gemm.hpp"
#include "calibration/tool/kernels.hpp"

namespace gpuscale::calib {
namespace {

using compute::TrainingPass;

const float kOne = 1, kZero = 0;

// The bias of a convolution or fully connected layer: cuDNN's add-tensor after the forward
// call, its backward-bias reduction in the weights pass (as MXNet and Caffe run them).
class Bias {
 public:
  Bias(GpuContext& ctx, long batch, const wl::Shape& out, long filters)
      : ctx_(ctx),
        bias_desc_(ctx.element().cudnn(), 1, filters, 1, 1),
        out_desc_(ctx.element().cudnn(), batch, out.channels, out.height, out.width),
        bias_(ctx.tensor(static_cast<std::size_t>(filters))),
        grad_(ctx.tensor(static_cast<std::size_t>(filters))) {}

  void forward(void* y) {
    GS_CUDNN(cudnnAddTensor(ctx_.cudnn(), &kOne, bias_desc_.get(), bias_.get(), &kOne,
                            out_desc_.get(), y));
  }
  void backward(const void* dy) {
    GS_CUDNN(cudnnConvolutionBackwardBias(ctx_.cudnn(), &kOne, out_desc_.get(), dy, &kZero,
                                          bias_desc_.get(), grad_.get()));
  }

 private:
  GpuContext& ctx_;
  TensorDesc bias_desc_;
  TensorDesc out_desc_;
  DeviceBuffer bias_;
  DeviceBuffer grad_;
};

class ConvOp final : public LayerOp {
 public:
  ConvOp(GpuContext& ctx, const wl::Layer& layer, const compute::ConvShape& shape,
         const LayerIo& io, SharedResources shared)
      : io_(io),
        conv_(ctx, shape, shared.workspace, shared.conv_algorithms),
        weight_(ctx.tensor(weights_of(layer))),
        weight_grad_(ctx.tensor(weights_of(layer))) {
    if (layer.params.bias) {
      bias_ = std::make_unique<Bias>(ctx, io.batch, layer.output, layer.params.filters);
    }
  }

  void run(TrainingPass pass) override {
    switch (pass) {
      case TrainingPass::forward:
        conv_.forward(io_.inputs[0], weight_.get(), io_.output);
        if (bias_) bias_->forward(io_.output);
        return;
      case TrainingPass::backward_data:
        conv_.backward_data(weight_.get(), io_.output_grad, io_.input_grads[0]);
        return;
      case TrainingPass::backward_weights:
        conv_.backward_weights(io_.inputs[0], io_.output_grad, weight_grad_.get());
        if (bias_) bias_->backward(io_.output_grad);
        return;
    }
  }
  std::string algorithm(TrainingPass pass) const override { return conv_.algorithm(pass); }

 private:
  static std::size_t weights_of(const wl::Layer& layer) {
    const wl::LayerParams& p = layer.params;
    return static_cast<std::size_t>(p.filters * p.kernel_h * p.kernel_w *
                                    (layer.input.channels / p.groups));
  }

  LayerIo io_;
  Convolution conv_;
  DeviceBuffer weight_;
  DeviceBuffer weight_grad_;
  std::unique_ptr<Bias> bias_;
};

// y (N x outputs) = x (N x inputs) W^T; in cuBLAS's column-major terms, with X = x^T (k x N)
// and W stored k x n: forward Y = W^T X, backward-data dX = W dY, backward-weights dW = X dY^T.
class FcOp final : public LayerOp {
 public:
  FcOp(GpuContext& ctx, const wl::Layer& layer, const LayerIo& io)
      : ctx_(ctx),
        io_(io),
        inputs_(layer.input.elements()),
        outputs_(layer.params.filters),
        weight_(ctx.tensor(static_cast<std::size_t>(inputs_ * outputs_))),
        weight_grad_(ctx.tensor(static_cast<std::size_t>(inputs_ * outputs_))) {
    if (layer.params.bias) {
      bias_ = std::make_unique<Bias>(ctx, io.batch, layer.output, layer.params.filters);
    }
  }

  void run(TrainingPass pass) override {
    const long n = io_.batch;
    switch (pass) {
      case TrainingPass::forward:
        gemm(ctx_, {outputs_, n, inputs_, true, false}, weight_.get(), io_.inputs[0],
             io_.output);
        if (bias_) bias_->forward(io_.output);
        return;
      case TrainingPass::backward_data:
        gemm(ctx_, {inputs_, n, outputs_, false, false}, weight_.get(), io_.output_grad,
             io_.input_grads[0]);
        return;
      case TrainingPass::backward_weights:
        gemm(ctx_, {inputs_, outputs_, n, false, true}, io_.inputs[0], io_.output_grad,
             weight_grad_.get());
        if (bias_) bias_->backward(io_.output_grad);
        return;
    }
  }
  std::string algorithm(TrainingPass) const override { return gemm_algorithm(ctx_); }

 private:
  GpuContext& ctx_;
  LayerIo io_;
  long inputs_;
  long outputs_;
  DeviceBuffer weight_;
  DeviceBuffer weight_grad_;
  std::unique_ptr<Bias> bias_;
};

// A layer whose input and output tensors keep one shape for cuDNN's element-wise operators.
class TensorOp : public LayerOp {
 protected:
  TensorOp(GpuContext& ctx, const wl::Layer& layer, const LayerIo& io)
      : ctx_(ctx),
        io_(io),
        in_desc_(ctx.element().cudnn(), io.batch, layer.input.channels, layer.input.height,
                 layer.input.width),
        out_desc_(ctx.element().cudnn(), io.batch, layer.output.channels, layer.output.height,
                  layer.output.width) {}

  GpuContext& ctx_;
  LayerIo io_;
  TensorDesc in_desc_;
  TensorDesc out_desc_;
};

class ActivationOp final : public TensorOp {
 public:
  ActivationOp(GpuContext& ctx, const wl::Layer& layer, const LayerIo& io,
               cudnnActivationMode_t mode)
      : TensorOp(ctx, layer, io) {
    GS_CUDNN(cudnnCreateActivationDescriptor(&desc_));
    GS_CUDNN(cudnnSetActivationDescriptor(desc_, mode, CUDNN_NOT_PROPAGATE_NAN, 0));
  }
  ~ActivationOp() override { cudnnDestroyActivationDescriptor(desc_); }

  void run(TrainingPass pass) override {
    if (pass == TrainingPass::forward) {
      GS_CUDNN(cudnnActivationForward(ctx_.cudnn(), desc_, &kOne, in_desc_.get(), io_.inputs[0],
                                      &kZero, out_desc_.get(), io_.output));
    } else {
      GS_CUDNN(cudnnActivationBackward(ctx_.cudnn(), desc_, &kOne, out_desc_.get(), io_.output,
                                       out_desc_.get(), io_.output_grad, in_desc_.get(),
                                       io_.inputs[0], &kZero, in_desc_.get(),
                                       io_.input_grads[0]));
    }
  }

 private:
  cudnnActivationDescriptor_t desc_ = nullptr;
};

// cuDNN pools with floor rounding; a layer with ceil rounding ("full" convention) is timed at
// cuDNN's output size, which is at most one row and column smaller.
class PoolOp final : public LayerOp {
 public:
  PoolOp(GpuContext& ctx, const wl::Layer& layer, const LayerIo& io)
      : ctx_(ctx),
        io_(io),
        in_desc_(ctx.element().cudnn(), io.batch, layer.input.channels, layer.input.height,
                 layer.input.width) {
    const wl::LayerParams& p = layer.params;
    const bool global = p.global_pool;
    GS_CUDNN(cudnnCreatePoolingDescriptor(&desc_));
    GS_CUDNN(cudnnSetPooling2dDescriptor(
        desc_,
        p.pool == wl::PoolKind::Max ? CUDNN_POOLING_MAX
                                    : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
        CUDNN_NOT_PROPAGATE_NAN, global ? static_cast<int>(layer.input.height) : p.kernel_h,
        global ? static_cast<int>(layer.input.width) : p.kernel_w, global ? 0 : p.pad_h,
        global ? 0 : p.pad_w, global ? 1 : p.stride_h, global ? 1 : p.stride_w));
    int n = 0, c = 0, h = 0, w = 0;
    GS_CUDNN(cudnnGetPooling2dForwardOutputDim(desc_, in_desc_.get(), &n, &c, &h, &w));
    out_desc_ = std::make_unique<TensorDesc>(ctx.element().cudnn(), n, c, h, w);
  }
  ~PoolOp() override { cudnnDestroyPoolingDescriptor(desc_); }

  void run(TrainingPass pass) override {
    if (pass == TrainingPass::forward) {
      GS_CUDNN(cudnnPoolingForward(ctx_.cudnn(), desc_, &kOne, in_desc_.get(), io_.inputs[0],
                                   &kZero, out_desc_->get(), io_.output));
    } else {
      GS_CUDNN(cudnnPoolingBackward(ctx_.cudnn(), desc_, &kOne, out_desc_->get(), io_.output,
                                    out_desc_->get(), io_.output_grad, in_desc_.get(),
                                    io_.inputs[0], &kZero, in_desc_.get(), io_.input_grads[0]));
    }
  }

 private:
  GpuContext& ctx_;
  LayerIo io_;
  TensorDesc in_desc_;
  std::unique_ptr<TensorDesc> out_desc_;
  cudnnPoolingDescriptor_t desc_ = nullptr;
};

// AlexNet's constants (Krizhevsky et al. 2012: k = 2, alpha = 1e-4, beta = 0.75).
class LrnOp final : public TensorOp {
 public:
  LrnOp(GpuContext& ctx, const wl::Layer& layer, const LayerIo& io) : TensorOp(ctx, layer, io) {
    GS_CUDNN(cudnnCreateLRNDescriptor(&desc_));
    GS_CUDNN(cudnnSetLRNDescriptor(desc_, static_cast<unsigned>(layer.params.lrn_size), 1e-4,
                                   0.75, 2.0));
  }
  ~LrnOp() override { cudnnDestroyLRNDescriptor(desc_); }

  void run(TrainingPass pass) override {
    if (pass == TrainingPass::forward) {
      GS_CUDNN(cudnnLRNCrossChannelForward(ctx_.cudnn(), desc_, CUDNN_LRN_CROSS_CHANNEL_DIM1,
                                           &kOne, in_desc_.get(), io_.inputs[0], &kZero,
                                           out_desc_.get(), io_.output));
    } else {
      GS_CUDNN(cudnnLRNCrossChannelBackward(
          ctx_.cudnn(), desc_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &kOne, out_desc_.get(), io_.output,
          out_desc_.get(), io_.output_grad, in_desc_.get(), io_.inputs[0], &kZero,
          in_desc_.get(), io_.input_grads[0]));
    }
  }

 private:
  cudnnLRNDescriptor_t desc_ = nullptr;
};

// Spatial batch norm in training mode. cuDNN computes the input gradient and the gamma and beta
// gradients in one call; it runs as the backward-data pass, or as the weights pass for a layer
// whose input needs no gradient.
class BatchNormOp final : public TensorOp {
 public:
  BatchNormOp(GpuContext& ctx, const wl::Layer& layer, const LayerIo& io)
      : TensorOp(ctx, layer, io),
        gradient_in_data_pass_(io.input_grads[0] != nullptr),
        channels_(static_cast<std::size_t>(layer.output.channels)) {
    GS_CUDNN(cudnnCreateTensorDescriptor(&param_desc_));
    GS_CUDNN(cudnnDeriveBNTensorDescriptor(param_desc_, in_desc_.get(), CUDNN_BATCHNORM_SPATIAL));
    for (auto& b : params_) b = ctx.float_tensor(channels_);
  }
  ~BatchNormOp() override { cudnnDestroyTensorDescriptor(param_desc_); }

  void run(TrainingPass pass) override {
    constexpr double kEpsilon = 1e-3;  // MXNet's default
    if (pass == TrainingPass::forward) {
      GS_CUDNN(cudnnBatchNormalizationForwardTraining(
          ctx_.cudnn(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, in_desc_.get(), io_.inputs[0],
          out_desc_.get(), io_.output, param_desc_, params_[kGamma].get(), params_[kBeta].get(),
          0.1, params_[kRunningMean].get(), params_[kRunningVar].get(), kEpsilon,
          params_[kSavedMean].get(), params_[kSavedInvVar].get()));
      return;
    }
    if ((pass == TrainingPass::backward_data) != gradient_in_data_pass_) return;
    GS_CUDNN(cudnnBatchNormalizationBackward(
        ctx_.cudnn(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, &kOne, &kZero, in_desc_.get(),
        io_.inputs[0], out_desc_.get(), io_.output_grad, in_desc_.get(),
        gradient_in_data_pass_ ? io_.input_grads[0] : scratch(), param_desc_,
        params_[kGamma].get(), params_[kGammaGrad].get(), params_[kBetaGrad].get(), kEpsilon,
        params_[kSavedMean].get(), params_[kSavedInvVar].get()));
  }

 private:
  // An input gradient nobody reads still needs somewhere to go.
  void* scratch() {
    if (scratch_.get() == nullptr) {
      scratch_ = ctx_.tensor(static_cast<std::size_t>(io_.batch) * channels_);
    }
    return scratch_.get();
  }

  enum { kGamma, kBeta, kRunningMean, kRunningVar, kSavedMean, kSavedInvVar, kGammaGrad,
         kBetaGrad, kParamCount };
  bool gradient_in_data_pass_;
  std::size_t channels_;
  cudnnTensorDescriptor_t param_desc_ = nullptr;
  std::array<DeviceBuffer, kParamCount> params_;
  DeviceBuffer scratch_;
};

class DropoutOp final : public TensorOp {
 public:
  DropoutOp(GpuContext& ctx, const wl::Layer& layer, const LayerIo& io)
      : TensorOp(ctx, layer, io) {
    std::size_t state_bytes = 0, reserve_bytes = 0;
    GS_CUDNN(cudnnDropoutGetStatesSize(ctx.cudnn(), &state_bytes));
    GS_CUDNN(cudnnDropoutGetReserveSpaceSize(in_desc_.get(), &reserve_bytes));
    states_ = DeviceBuffer(state_bytes);
    reserve_ = DeviceBuffer(reserve_bytes);
    GS_CUDNN(cudnnCreateDropoutDescriptor(&desc_));
    GS_CUDNN(cudnnSetDropoutDescriptor(desc_, ctx.cudnn(),
                                       static_cast<float>(layer.params.dropout_rate),
                                       states_.get(), state_bytes, 1234));
  }
  ~DropoutOp() override { cudnnDestroyDropoutDescriptor(desc_); }

  void run(TrainingPass pass) override {
    if (pass == TrainingPass::forward) {
      GS_CUDNN(cudnnDropoutForward(ctx_.cudnn(), desc_, in_desc_.get(), io_.inputs[0],
                                   out_desc_.get(), io_.output, reserve_.get(),
                                   reserve_.bytes()));
    } else {
      GS_CUDNN(cudnnDropoutBackward(ctx_.cudnn(), desc_, out_desc_.get(), io_.output_grad,
                                    in_desc_.get(), io_.input_grads[0], reserve_.get(),
                                    reserve_.bytes()));
    }
  }

 private:
  cudnnDropoutDescriptor_t desc_ = nullptr;
  DeviceBuffer states_;
  DeviceBuffer reserve_;
};

class SoftmaxOp final : public TensorOp {
 public:
  SoftmaxOp(GpuContext& ctx, const wl::Layer& layer, const LayerIo& io)
      : TensorOp(ctx, layer, io) {}

  void run(TrainingPass pass) override {
    if (pass == TrainingPass::forward) {
      GS_CUDNN(cudnnSoftmaxForward(ctx_.cudnn(), CUDNN_SOFTMAX_ACCURATE,
                                   CUDNN_SOFTMAX_MODE_INSTANCE, &kOne, in_desc_.get(),
                                   io_.inputs[0], &kZero, out_desc_.get(), io_.output));
    } else {
      GS_CUDNN(cudnnSoftmaxBackward(ctx_.cudnn(), CUDNN_SOFTMAX_ACCURATE,
                                    CUDNN_SOFTMAX_MODE_INSTANCE, &kOne, out_desc_.get(),
                                    io_.output, out_desc_.get(), io_.output_grad, &kZero,
                                    in_desc_.get(), io_.input_grads[0]));
    }
  }
};

// Channel concatenation: one strided copy per input into its slice of the output; backward
// copies each slice of the gradient back out (MXNet's Concat does the same per input).
class ConcatOp final : public LayerOp {
 public:
  ConcatOp(GpuContext& ctx, const wl::Workload& workload, const wl::Layer& layer,
           const LayerIo& io)
      : ctx_(ctx), io_(io) {
    const std::size_t plane = static_cast<std::size_t>(layer.output.height * layer.output.width) *
                              ctx.element().bytes();
    out_pitch_ = static_cast<std::size_t>(layer.output.channels) * plane;
    std::size_t offset = 0;
    for (int input : layer.inputs) {
      const std::size_t bytes =
          static_cast<std::size_t>(workload.layers[static_cast<std::size_t>(input)]
                                       .output.channels) * plane;
      slices_.push_back({offset, bytes});
      offset += bytes;
    }
  }

  void run(TrainingPass pass) override {
    const auto rows = static_cast<std::size_t>(io_.batch);
    for (std::size_t i = 0; i < slices_.size(); ++i) {
      const auto [offset, bytes] = slices_[i];
      if (pass == TrainingPass::forward) {
        GS_CUDA(cudaMemcpy2DAsync(static_cast<char*>(io_.output) + offset, out_pitch_,
                                  io_.inputs[i], bytes, bytes, rows, cudaMemcpyDeviceToDevice,
                                  ctx_.stream()));
      } else if (io_.input_grads[i] != nullptr) {
        GS_CUDA(cudaMemcpy2DAsync(io_.input_grads[i], bytes,
                                  static_cast<const char*>(io_.output_grad) + offset, out_pitch_,
                                  bytes, rows, cudaMemcpyDeviceToDevice, ctx_.stream()));
      }
    }
  }

 private:
  struct Slice {
    std::size_t offset, bytes;
  };
  GpuContext& ctx_;
  LayerIo io_;
  std::size_t out_pitch_ = 0;
  std::vector<Slice> slices_;
};

// y = x0 + scale x1 (+ x2 ...): cuDNN's op-tensor per extra input. Backward hands each input
// the output gradient (times its scale): one transform per input, as MXNet's backward of an
// element-wise add writes each input's gradient.
class AddOp final : public TensorOp {
 public:
  AddOp(GpuContext& ctx, const wl::Layer& layer, const LayerIo& io)
      : TensorOp(ctx, layer, io), scale_(static_cast<float>(layer.params.scale)) {
    GS_CUDNN(cudnnCreateOpTensorDescriptor(&desc_));
    GS_CUDNN(cudnnSetOpTensorDescriptor(desc_, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT,
                                        CUDNN_NOT_PROPAGATE_NAN));
  }
  ~AddOp() override { cudnnDestroyOpTensorDescriptor(desc_); }

  void run(TrainingPass pass) override {
    if (pass == TrainingPass::forward) {
      GS_CUDNN(cudnnOpTensor(ctx_.cudnn(), desc_, &kOne, out_desc_.get(), io_.inputs[0],
                             &scale_, out_desc_.get(), io_.inputs[1], &kZero, out_desc_.get(),
                             io_.output));
      for (std::size_t i = 2; i < io_.inputs.size(); ++i) {
        GS_CUDNN(cudnnOpTensor(ctx_.cudnn(), desc_, &kOne, out_desc_.get(), io_.output, &kOne,
                               out_desc_.get(), io_.inputs[i], &kZero, out_desc_.get(),
                               io_.output));
      }
      return;
    }
    for (std::size_t i = 0; i < io_.input_grads.size(); ++i) {
      if (io_.input_grads[i] == nullptr) continue;
      const float* alpha = i == 1 ? &scale_ : &kOne;
      GS_CUDNN(cudnnTransformTensor(ctx_.cudnn(), alpha, out_desc_.get(), io_.output_grad,
                                    &kZero, out_desc_.get(), io_.input_grads[i]));
    }
  }

 private:
  cudnnOpTensorDescriptor_t desc_ = nullptr;
  float scale_;
};

// EDSR's pixel shuffle and nearest upsampling: data movement, gpuscale-calibrate's own kernels.
class ResampleOp final : public LayerOp {
 public:
  ResampleOp(GpuContext& ctx, const wl::Layer& layer, const LayerIo& io)
      : ctx_(ctx), layer_(layer), io_(io) {}

  void run(TrainingPass pass) override {
    const bool backward = pass != TrainingPass::forward;
    const void* in = backward ? io_.output_grad : io_.inputs[0];
    void* out = backward ? io_.input_grads[0] : io_.output;
    const wl::Shape& small = layer_.input;
    if (layer_.type == wl::LayerType::PixelShuffle) {
      pixel_shuffle(in, out, io_.batch, layer_.output.channels, small.height, small.width,
                    layer_.params.factor, ctx_.element().half(), backward, ctx_.stream());
    } else {
      upsample_nearest(in, out, io_.batch, small.channels, small.height, small.width,
                       layer_.params.factor, ctx_.element().half(), backward, ctx_.stream());
    }
    GS_CUDA(cudaGetLastError());
  }

 private:
  GpuContext& ctx_;
  const wl::Layer& layer_;
  LayerIo io_;
};

}  // namespace

std::unique_ptr<LayerOp> make_layer_op(GpuContext& ctx, const wl::Workload& workload,
                                       const wl::Layer& layer, const compute::LayerPlan& plan,
                                       const LayerIo& io, SharedResources shared) {
  switch (layer.type) {
    case wl::LayerType::Conv: {
      compute::ConvShape shape = plan.conv;
      shape.batch = io.batch;
      return std::make_unique<ConvOp>(ctx, layer, shape, io, shared);
    }
    case wl::LayerType::Fc: return std::make_unique<FcOp>(ctx, layer, io);
    case wl::LayerType::Relu:
      return std::make_unique<ActivationOp>(ctx, layer, io, CUDNN_ACTIVATION_RELU);
    case wl::LayerType::Tanh:
      return std::make_unique<ActivationOp>(ctx, layer, io, CUDNN_ACTIVATION_TANH);
    case wl::LayerType::Pool: return std::make_unique<PoolOp>(ctx, layer, io);
    case wl::LayerType::Lrn: return std::make_unique<LrnOp>(ctx, layer, io);
    case wl::LayerType::BatchNorm: return std::make_unique<BatchNormOp>(ctx, layer, io);
    case wl::LayerType::Dropout: return std::make_unique<DropoutOp>(ctx, layer, io);
    case wl::LayerType::Softmax: return std::make_unique<SoftmaxOp>(ctx, layer, io);
    case wl::LayerType::Concat: return std::make_unique<ConcatOp>(ctx, workload, layer, io);
    case wl::LayerType::Add: return std::make_unique<AddOp>(ctx, layer, io);
    case wl::LayerType::Upsample:
    case wl::LayerType::PixelShuffle: return std::make_unique<ResampleOp>(ctx, layer, io);
    case wl::LayerType::Input: break;
  }
  throw CudaFailure(fmt::format("layer {}: no GPU operation for a layer of type {}", layer.name,
                                wl::to_string(layer.type)));
}

}  // namespace gpuscale::calib
