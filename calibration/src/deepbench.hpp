// Baidu DeepBench training results (github.com/baidu-research/DeepBench, results/train/
// DeepBench_NV_V100.xlsx, exported sheet by sheet to CSV as ../shared/data/deepbench-v100/
// holds them): cuBLAS GEMM and cuDNN convolution times measured on a V100 in a DGX-1 with
// CUDA 10.1 and cuDNN 7.6. Read into plain rows; the data stays outside the repository.
//
// A file holds sections one after another: "Dense Matrix Multiplication", "Convolution", then
// the recurrent sections (vanilla RNN, LSTM, GRU) and all-reduce; of these only the LSTM rows are
// read. A data row is one whose first size column is a whole number; blank separator rows are
// skipped. DeepBench reports whole microseconds (written as milliseconds with three decimals).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/compute/kernel_time.hpp"
#include "topologies/core/units.hpp"

namespace gpuscale::calib {

struct DeepBenchGemm {
  int line = 0;             // in the CSV file
  std::string application;  // "DeepSpeech", "Language Modelling", ...
  long m = 0, n = 0, k = 0;
  bool a_transposed = false;
  bool b_transposed = false;
  Seconds time;
};

struct DeepBenchConv {
  int line = 0;
  std::string application;
  long w = 0, h = 0, c = 0, n = 0, k = 0;  // input width, height, channels; batch; filters
  long s = 0, r = 0;                       // filter width, height
  long pad_w = 0, pad_h = 0;
  long stride_w = 0, stride_h = 0;
  long p = 0, q = 0;                       // output width, height, as DeepBench states them
  Seconds forward;
  std::optional<Seconds> backward_data;    // "N/A*" for input layers: no gradient wrt inputs
  Seconds backward_weights;
  std::string forward_algorithm;           // cuDNN's choice, e.g. "WINOGRAD_NONFUSED"
};

// One LSTM layer as DeepBench's rnn_bench.cu timed it (code/nvidia/rnn_bench.cu and
// cudnn_helper.h at commit 30c5115, the one that published these results): one unidirectional
// layer, input size = hidden size with CUDNN_SKIP_INPUT (no input projection: x is added to the
// gates), cuDNN's CUDNN_RNN_ALGO_STANDARD, CUDNN_TENSOR_OP_MATH (Tensor Cores for FP16 data; FP32
// data stays on the CUDA cores); each time the mean of 100 back-to-back calls
// (cudnnRNNForwardTraining, cudnnRNNBackwardData, cudnnRNNBackwardWeights).
struct DeepBenchLstm {
  int line = 0;
  std::string application;  // "Machine Translation", "Language Modelling", ...
  long hidden = 0, n = 0, timesteps = 0;
  Seconds forward, backward_data, backward_weights;
};

struct DeepBenchResults {
  std::string file;
  std::string precision;  // the file's first line: "Float", "16 bit inputs, ..."
  std::vector<DeepBenchGemm> gemms;
  std::vector<DeepBenchConv> convs;
  std::vector<DeepBenchLstm> lstms;
};

// The convolution in the compute model's terms: batch N, input C x H x W, K filters of R x S
// (height x width), DeepBench's pads and strides, one group.
compute::ConvShape conv_shape(const DeepBenchConv& c);

// Throws ConfigError "FILE:LINE: ..." for a missing file, a section whose header is not the
// one expected, or a data row with a malformed value (including output sizes P, Q that do not
// follow from the input, filter, pad and stride).
DeepBenchResults read_deepbench_csv(const std::string& path);

}  // namespace gpuscale::calib
