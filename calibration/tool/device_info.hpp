// The measurement header of a calibration file: which GPU (as the CUDA runtime describes it,
// and as the gpuscale GPU spec it corresponds to), which driver, CUDA, cuDNN and cuBLAS, when.
#pragma once

#include <string>

#include "calibration/tool/gpu_context.hpp"
#include "sim/compute/measurement.hpp"

namespace gpuscale::calib {

// `gpu_model` names the topologies/gpus/ spec of the device; "" finds it from the device's name
// ("NVIDIA H200" -> H200-SXM) and throws CudaFailure, listing the shipped specs, when no single
// spec matches.
compute::MeasurementHeader describe_machine(const GpuContext& ctx, const std::string& gpu_model);

}  // namespace gpuscale::calib
