// ASTRA-sim 1.0 text workloads: what the parser reads, the iteration it builds (DATA: forward,
// then each layer's weight-gradient kernels, collective and update, and input-gradient kernels
// from the last layer to the first), and a one-line error naming file and line for each mistake.
#include <gtest/gtest.h>

#include "tests/support/test_support.hpp"
#include "workloads/interop/astra_sim_text.hpp"

namespace gpuscale::interop {
namespace {

using gpuscale::testing::config_error_of;
using gpuscale::testing::write_temp_file;
using Kind = TraceNode::Kind;

const std::string kData = std::string(GPUSCALE_SOURCE_DIR) + "/tests/interop/data/";

TEST(AstraSimText, ReadsEveryFieldOfALayer) {
  const AstraSimWorkload w = load_astra_sim_workload(kData + "resnet50-like.txt");
  EXPECT_EQ(w.parallelism, "DATA");
  ASSERT_EQ(w.layers.size(), 54u);
  const AstraSimLayer& conv1 = w.layers[0];
  EXPECT_EQ(conv1.name, "conv1");
  EXPECT_EQ(conv1.line, 3);
  EXPECT_EQ(conv1.fwd_cycles, 20094u);
  EXPECT_EQ(conv1.wg_cycles, 40188u);
  EXPECT_EQ(conv1.wg_comm.kind, wl::Collective::AllReduce);
  EXPECT_EQ(conv1.wg_comm.bytes, 37632u);
  EXPECT_EQ(conv1.wg_update_cycles, 123u);
  EXPECT_FALSE(conv1.fwd_comm.kind.has_value());
}

TEST(AstraSimText, DataParallelIterationRunsBackwardFromTheLastLayer) {
  const TraceGraph g = astra_sim_iteration(load_astra_sim_workload(kData + "compute-only.txt"));
  // fwd0 fwd1 | wg1 ig1 | wg0 (the first layer has no input gradient); no collective: NONE.
  ASSERT_EQ(g.nodes.size(), 5u);
  const std::vector<std::string> names{"layer0 fwd", "layer1 fwd", "layer1 wg", "layer1 ig",
                                       "layer0 wg"};
  double total = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(g.nodes[i].name, names[i]);
    EXPECT_EQ(g.nodes[i].kind, Kind::Compute);
    if (i > 0) {
      EXPECT_EQ(g.nodes[i].deps, std::vector<int>{static_cast<int>(i) - 1}) << i;
    }
    total += g.nodes[i].seconds;
  }
  EXPECT_DOUBLE_EQ(total, 19000e-9);  // cycles of one nanosecond
}

TEST(AstraSimText, WeightGradientCollectiveOverlapsTheRestOfTheBackward) {
  const std::string path = write_temp_file("two-allreduces.txt",
                                           "DATA\n2\n"
                                           "a -1 10 NONE 0 20 NONE 0 30 ALLREDUCE 1000 5\n"
                                           "b -1 10 NONE 0 20 NONE 0 30 ALLGATHER 2000 7\n");
  const TraceGraph g = astra_sim_iteration(load_astra_sim_workload(path));
  // a fwd, b fwd, b wg, b wg allgather, b update, b ig, a wg, a wg allreduce, a update
  ASSERT_EQ(g.nodes.size(), 9u);
  EXPECT_EQ(g.nodes[3].kind, Kind::Collective);
  EXPECT_EQ(g.nodes[3].collective, wl::Collective::AllGather);
  EXPECT_EQ(g.nodes[3].bytes, 2000);
  EXPECT_EQ(g.nodes[3].deps, std::vector<int>{2});
  EXPECT_EQ(g.nodes[4].kind, Kind::Delay);
  EXPECT_DOUBLE_EQ(g.nodes[4].seconds, 7e-9);
  EXPECT_EQ(g.nodes[5].name, "b ig");
  EXPECT_EQ(g.nodes[5].deps, std::vector<int>{2});  // not on the collective
  EXPECT_EQ(g.nodes[7].collective, wl::Collective::AllReduce);
}

TEST(AstraSimText, MicroBenchmarkIsItsCollectivesAlone) {
  const std::string path =
      write_temp_file("micro.txt", "MICRO\n1\nconv1 -1 5 NONE 0 5 NONE 0 5  ALLREDUCE 1048576 5\n");
  const TraceGraph g = astra_sim_iteration(load_astra_sim_workload(path));
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].kind, Kind::Collective);
  EXPECT_TRUE(g.nodes[0].deps.empty());
  EXPECT_EQ(g.nodes[1].kind, Kind::Delay);
}

std::string error_of(const std::string& name, const std::string& text) {
  const std::string path = write_temp_file(name, text);
  const std::string message = config_error_of([&] { load_astra_sim_workload(path); });
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_EQ(message.rfind(path + ":", 0), 0u) << message;
  return message.substr(path.size());
}

TEST(AstraSimText, MistakesNameFileLineAndFix) {
  const std::string layer = "a -1 10 NONE 0 20 NONE 0 30 ALLREDUCE 1000 5\n";
  EXPECT_EQ(error_of("model.txt", "MODEL\n1\n" + layer),
            ":1: parallelism 'MODEL' is not replayed (gpuscale replays DATA and MICRO "
            "workloads; for tensor and pipeline parallelism use `gpuscale train`)");
  EXPECT_EQ(error_of("hybrid.txt", "HYBRID_TRANSFORMER model_parallel_NPU_group: 4\n1\n" + layer)
                .substr(0, 44),
            ":1: parallelism 'HYBRID_TRANSFORMER' is not ");
  EXPECT_EQ(error_of("short.txt", "DATA\n2\n" + layer + "b -1 10 NONE 0 20 NONE 0 30 ALLREDUCE 1000\n"),
            ":4: 11 fields, expected 12: name reserved fwd_compute fwd_comm_type fwd_comm_size "
            "ig_compute ig_comm_type ig_comm_size wg_compute wg_comm_type wg_comm_size wg_update");
  EXPECT_EQ(error_of("type.txt", "DATA\n1\na -1 10 NONE 0 20 NONE 0 30 ALLREDUSE 1000 5\n"),
            ":3: wg_comm_type of layer 'a': unknown comm type 'ALLREDUSE' (known: NONE, "
            "ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL)");
  EXPECT_EQ(error_of("number.txt", "DATA\n1\na -1 10 NONE 0 2.5 NONE 0 30 ALLREDUCE 1000 5\n"),
            ":3: ig_compute of layer 'a': '2.5' is not a whole number");
  EXPECT_EQ(error_of("negative.txt", "DATA\n1\na -1 10 NONE 0 20 NONE 0 30 ALLREDUCE -8 5\n"),
            ":3: wg_comm_size of layer 'a': '-8' is not a whole number");
  EXPECT_EQ(error_of("few.txt", "DATA\n3\n" + layer + layer),
            ":5: 2 layers given, line 2 says 3 (fix the count or the layers)");
  EXPECT_EQ(error_of("many.txt", "DATA\n1\n" + layer + "\n" + layer),
            ":5: 2 layers given, line 2 says 1 (fix the count or the layers)");
  EXPECT_EQ(error_of("count.txt", "DATA\nten\n" + layer),
            ":2: number of layers: 'ten' is not a whole number");
  EXPECT_EQ(error_of("long.txt", "DATA\n1\na -1 86400000000001 NONE 0 20 NONE 0 30 NONE 0 5\n"),
            ":3: fwd_compute of layer 'a': 86400000000001 cycles is more than a day (a cycle is a "
            "nanosecond)");
  EXPECT_EQ(error_of("huge.txt", "DATA\n1\na -1 10 NONE 0 20 NONE 0 30 ALLREDUCE "
                                 "2000000000000000000 5\n"),
            ":3: wg_comm_size of layer 'a': 2000000000000000000 bytes is more than 1 EiB");
  EXPECT_EQ(error_of("empty.txt", "\n"),
            ":1: empty ASTRA-sim workload (expected the parallelism, e.g. DATA)");
}

TEST(AstraSimText, MissingFileIsAConfigError) {
  EXPECT_EQ(config_error_of([] { load_astra_sim_workload("/no/such/file.txt"); }),
            "/no/such/file.txt: cannot read this ASTRA-sim workload (check the path)");
}

}  // namespace
}  // namespace gpuscale::interop
