// The figures of a sweep, one SVG file each, per figure group of sweep_series.hpp (a workload,
// split further when it would have too many series):
//  - speedup-GROUP.svg, efficiency-GROUP.svg (when the study varies the GPU count): speedup over
//    one GPU and speedup / GPUs (%) against the GPU count, a line per series, and ideal scaling;
//  - breakdown-GROUP.svg: time per iteration (ms) per GPU count, a bar per series stacked from
//    FP+BP, the rest of WU (update kernels) and WU's exposed communication;
//  - memory-GROUP.svg: memory of GPU0 and of the fullest other GPU (GB) per GPU count and series;
// then the link heat maps (topology_svg.hpp), links-MACHINE-WORKLOAD-COMM.svg: for each machine,
// workload and exchange method, the run with the most GPUs at the study's first batch (the first
// such run when routing or fusion vary too); runs that used no link (one GPU) get none. At most
// kMaxHeatMaps, the machines taking turns so that each gets one before any gets a second; each
// machine's in the order of their first row.
#pragma once

#include <string>
#include <vector>

#include "validation/studies/study.hpp"
#include "validation/studies/sweep_row.hpp"

namespace gpuscale::report {

inline constexpr size_t kMaxHeatMaps = 12;

// Writes the figures into `dir` (created if missing); returns their paths, in the order above.
// The same rows give the same bytes. Throws ConfigError when the folder cannot be created or
// written, or when a heat map's machine cannot be built.
std::vector<std::string> write_sweep_plots(const sweep::Study& study,
                                           const std::vector<sweep::SweepRow>& rows,
                                           const std::string& dir);

}  // namespace gpuscale::report
