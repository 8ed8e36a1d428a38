// The measured-profile file, version 2 (docs/calibration.md#measured-profiles): what the
// calibration tool writes reads back equal, files of the first version and files without the
// host-side costs still load, and the new mappings are as strict as the rest.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "sim/compute/profile.hpp"
#include "tests/support/test_support.hpp"

namespace gpuscale::compute {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using testing::config_error_of;
using testing::write_temp_file;

// Every field set but the host-side costs (profile_with_host_costs() adds them), times at whole
// nanoseconds, strings that need quoting.
MeasuredProfile full_profile() {
  MeasuredProfile p;
  MeasurementHeader& h = p.header;
  h.gpu = "H200-SXM";
  h.gpu_details = MeasuredGpu{"NVIDIA H200", "9.0", 132, {1980e6}, {3201e6}, {143771.0 * 1048576}};
  h.driver = "580.159.04";
  h.cuda = "13.0";
  h.cudnn = "9.13.0";
  h.cublas = "13.0.0";
  h.framework = "gpuscale-calibrate 0.1 (cuDNN and cuBLAS calls, no framework)";
  h.date = "2026-11-22";
  h.method = "3 warm-up runs, then the median of 20: \"CUDA events\" #timed";
  h.source = "device machine of the gpuscale project";
  Microbenchmarks& m = h.microbenchmarks.emplace();
  m.launch_overhead = {2.104e-6};
  m.device_copy_bandwidth = {4300.5e9};
  m.host_to_device = {55.123e9};
  m.device_to_host = {53e9};
  m.peers = {{0, 1, true, {150.25e9}, {8e-6}}, {1, 0, false, {12e9}, {10.5e-6}}};
  p.precision = Precision::tensor;
  p.workload = "resnet-50";
  p.out_of_memory_batches = {2048, 4096};
  LayerProfile conv1;
  conv1.name = "conv1";
  BatchMeasurement b16;
  b16.time = {{310.125e-6}, {0}, {550.2e-6}};
  b16.spread = PassTimes{{3.1e-6}, {0}, {5e-6}};
  b16.algorithm = {"IMPLICIT_PRECOMP_GEMM", "", "ALGO_1"};
  conv1.by_batch[16] = b16;
  BatchMeasurement b32;
  b32.time = {{0.000612345}, {0}, {1.1e-3}};  // no spread, no algorithms
  conv1.by_batch[32] = b32;
  LayerProfile relu;
  relu.name = "res2.1.relu";
  BatchMeasurement r16;
  r16.time = {{12.001e-6}, {13e-6}, {0}};
  r16.algorithm = {"yes", "", ""};  // a word YAML 1.1 would take for a boolean
  relu.by_batch[16] = r16;
  p.layers = {conv1, relu};
  return p;
}

void expect_times_equal(const PassTimes& a, const PassTimes& b, const std::string& where) {
  for (int p = 0; p < kTrainingPassCount; ++p) {
    const auto pass = static_cast<TrainingPass>(p);
    EXPECT_NEAR(a.of(pass).value, b.of(pass).value, 1e-13) << where << " " << to_string(pass);
  }
}

void expect_host_call_times_equal(const std::optional<HostCallTime>& a,
                                  const std::optional<HostCallTime>& b, const std::string& what) {
  ASSERT_EQ(a.has_value(), b.has_value()) << what;
  if (!a) return;
  EXPECT_NEAR(a->median.value, b->median.value, 1e-13) << what;
  EXPECT_NEAR(a->spread.value, b->spread.value, 1e-13) << what;
}

void expect_headers_equal(const MeasurementHeader& a, const MeasurementHeader& b) {
  EXPECT_EQ(a.gpu, b.gpu);
  ASSERT_EQ(a.gpu_details.has_value(), b.gpu_details.has_value());
  if (a.gpu_details) {
    EXPECT_EQ(a.gpu_details->name, b.gpu_details->name);
    EXPECT_EQ(a.gpu_details->compute_capability, b.gpu_details->compute_capability);
    EXPECT_EQ(a.gpu_details->sm_count, b.gpu_details->sm_count);
    EXPECT_DOUBLE_EQ(a.gpu_details->sm_clock.value, b.gpu_details->sm_clock.value);
    EXPECT_DOUBLE_EQ(a.gpu_details->memory_clock.value, b.gpu_details->memory_clock.value);
    EXPECT_DOUBLE_EQ(a.gpu_details->memory.value, b.gpu_details->memory.value);
  }
  EXPECT_EQ(a.driver, b.driver);
  EXPECT_EQ(a.cuda, b.cuda);
  EXPECT_EQ(a.cudnn, b.cudnn);
  EXPECT_EQ(a.cublas, b.cublas);
  EXPECT_EQ(a.framework, b.framework);
  EXPECT_EQ(a.date, b.date);
  EXPECT_EQ(a.method, b.method);
  EXPECT_EQ(a.source, b.source);
  ASSERT_EQ(a.microbenchmarks.has_value(), b.microbenchmarks.has_value());
  if (!a.microbenchmarks) return;
  const Microbenchmarks &ma = *a.microbenchmarks, &mb = *b.microbenchmarks;
  EXPECT_NEAR(ma.launch_overhead.value, mb.launch_overhead.value, 1e-13);
  EXPECT_NEAR(ma.device_copy_bandwidth.value, mb.device_copy_bandwidth.value, 1);
  EXPECT_NEAR(ma.host_to_device.value, mb.host_to_device.value, 1);
  EXPECT_NEAR(ma.device_to_host.value, mb.device_to_host.value, 1);
  expect_host_call_times_equal(ma.launch, mb.launch, "launch");
  expect_host_call_times_equal(ma.launch_sync, mb.launch_sync, "launch_sync");
  expect_host_call_times_equal(ma.event_record, mb.event_record, "event_record");
  ASSERT_EQ(ma.peer_copy_issue.has_value(), mb.peer_copy_issue.has_value());
  if (ma.peer_copy_issue) {
    EXPECT_EQ(ma.peer_copy_issue->peer, mb.peer_copy_issue->peer);
    expect_host_call_times_equal(ma.peer_copy_issue->issue, mb.peer_copy_issue->issue, "issue");
    expect_host_call_times_equal(ma.peer_copy_issue->round_trip, mb.peer_copy_issue->round_trip,
                                 "round_trip");
  }
  expect_host_call_times_equal(ma.host_sync_d2h, mb.host_sync_d2h, "host_sync_d2h");
  ASSERT_EQ(ma.peers.size(), mb.peers.size());
  for (size_t i = 0; i < ma.peers.size(); ++i) {
    EXPECT_EQ(ma.peers[i].from, mb.peers[i].from);
    EXPECT_EQ(ma.peers[i].to, mb.peers[i].to);
    EXPECT_EQ(ma.peers[i].peer_access, mb.peers[i].peer_access);
    EXPECT_NEAR(ma.peers[i].bandwidth.value, mb.peers[i].bandwidth.value, 1);
    EXPECT_NEAR(ma.peers[i].latency.value, mb.peers[i].latency.value, 1e-13);
  }
}

void expect_profiles_equal(const MeasuredProfile& a, const MeasuredProfile& b) {
  expect_headers_equal(a.header, b.header);
  EXPECT_EQ(a.precision, b.precision);
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.out_of_memory_batches, b.out_of_memory_batches);
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (size_t i = 0; i < a.layers.size(); ++i) {
    const LayerProfile &la = a.layers[i], &lb = b.layers[i];
    EXPECT_EQ(la.name, lb.name);
    ASSERT_EQ(la.by_batch.size(), lb.by_batch.size()) << la.name;
    for (const auto& [batch, ma] : la.by_batch) {
      ASSERT_TRUE(lb.by_batch.contains(batch)) << la.name << " " << batch;
      const BatchMeasurement& mb = lb.by_batch.at(batch);
      const std::string where = la.name + " at " + std::to_string(batch);
      expect_times_equal(ma.time, mb.time, where);
      ASSERT_EQ(ma.spread.has_value(), mb.spread.has_value()) << where;
      if (ma.spread) expect_times_equal(*ma.spread, *mb.spread, where + " spread");
      EXPECT_EQ(ma.algorithm, mb.algorithm) << where;
    }
  }
}

TEST(ProfileFormat, WrittenProfileReadsBackEqual) {
  const MeasuredProfile written = full_profile();
  const std::string text = profile_to_yaml(written);
  const std::string path = write_temp_file("h200-resnet-50.yaml", text);
  const MeasuredProfile read = load_profile(path);
  expect_profiles_equal(written, read);
  EXPECT_EQ(read.origin.file, path);
  EXPECT_EQ(read.header.gpu_origin.str(), path + ":1");  // where errors about the GPU point

  // The layout of docs/calibration.md: versions quoted, times in us, one flow mapping per batch.
  EXPECT_THAT(text, HasSubstr("\ndriver: \"580.159.04\"\ncuda: \"13.0\"\n"));
  EXPECT_THAT(text, HasSubstr("compute_capability: \"9.0\", sm_count: 132, sm_clock: 1980 MHz, "
                              "memory_clock: 3201 MHz, memory: 143771 MiB}"));
  EXPECT_THAT(text, HasSubstr("  launch_overhead: 2.104 us\n  device_copy_bandwidth: 4300.5 GB/s\n"));
  EXPECT_THAT(text, HasSubstr("out_of_memory_batches: [2048, 4096]\n"));
  EXPECT_THAT(text, HasSubstr(
      "    16: {forward: 310.125 us, backward_data: 0 us, backward_weights: 550.2 us,\n"
      "         spread: {forward: 3.1 us, backward_data: 0 us, backward_weights: 5 us},\n"
      "         algorithm: {forward: IMPLICIT_PRECOMP_GEMM, backward_data: \"\", "
      "backward_weights: ALGO_1}}\n"));
  EXPECT_THAT(text, HasSubstr("    32: {forward: 612.345 us, backward_data: 0 us, "
                              "backward_weights: 1100 us}\n"));

  // Written again, the same bytes.
  EXPECT_EQ(profile_to_yaml(read), text);
}

TEST(ProfileFormat, OptionalPartsLeftOutAreLeftOutOfTheFile) {
  MeasuredProfile p = full_profile();
  p.header.gpu_details.reset();
  p.header.microbenchmarks->peers.clear();
  p.header.cublas = p.header.date = p.header.method = p.header.source = "";
  p.out_of_memory_batches.clear();
  const std::string text = profile_to_yaml(p);
  EXPECT_THAT(text, Not(HasSubstr("gpu_details")));
  EXPECT_THAT(text, Not(HasSubstr("cublas")));
  EXPECT_THAT(text, Not(HasSubstr("out_of_memory_batches")));
  EXPECT_THAT(text, HasSubstr("  peers: []\n"));
  expect_profiles_equal(p, load_profile(write_temp_file("minimal.yaml", text)));
}

// The first version of the format, as tests and hand-written profiles have it.
constexpr const char* kVersion1 = R"(gpu: V100-SXM2
driver: "418.67"
cuda: "10.1"
cudnn: "7.6.2"
framework: MXNet 1.2.0 (NGC 18.04)
precision: fp32
workload: toy
source: made up for the test
layers:
  conv1:
    16: {forward: 1 ms, backward_data: 0 us, backward_weights: 2 ms}
)";

TEST(ProfileFormat, FirstVersionFilesLoadWithoutTheNewParts) {
  const MeasuredProfile p = load_profile(write_temp_file("v1.yaml", kVersion1));
  EXPECT_EQ(p.header.gpu, "V100-SXM2");
  EXPECT_EQ(p.header.cudnn, "7.6.2");
  EXPECT_EQ(p.header.framework, "MXNet 1.2.0 (NGC 18.04)");
  EXPECT_EQ(p.header.source, "made up for the test");
  EXPECT_FALSE(p.header.gpu_details.has_value());
  EXPECT_FALSE(p.header.microbenchmarks.has_value());
  EXPECT_TRUE(p.out_of_memory_batches.empty());
  const BatchMeasurement& m = p.layers.at(0).by_batch.at(16);
  EXPECT_DOUBLE_EQ(m.time.backward_weights.value, 2e-3);
  EXPECT_FALSE(m.spread.has_value());
  EXPECT_EQ(m.algorithm, (std::array<std::string, kTrainingPassCount>{}));
}

// The error for `text` with `from` replaced by `to`, written to `name`.
std::string error_for(const std::string& text, const std::string& name, const std::string& from,
                      const std::string& to) {
  std::string changed = text;
  const auto at = changed.find(from);
  if (at == std::string::npos) return "<'" + from + "' is not in the text>";
  changed.replace(at, from.size(), to);
  const std::string path = write_temp_file(name, changed);
  return config_error_of([&] { load_profile(path); });
}

TEST(ProfileFormat, UnknownKeysInTheNewMappingsAreReportedAtTheirLine) {
  const std::string text = profile_to_yaml(full_profile());
  // Lines of full_profile()'s file: 2 gpu_details, 12 launch_overhead, 13 device_copy_bandwidth,
  // 17 the first peer, 21 out_of_memory_batches, 24 layer conv1 at batch 16 (its spread on 25,
  // its algorithms on 26).
  EXPECT_THAT(error_for(text, "e1.yaml", "spread: {forward", "spread: {foward"),
              MatchesRegex(".*e1.yaml:25: unknown key 'foward' in spread of layer conv1 at batch "
                           "16 \\(did you mean 'forward'\\?\\)"));
  EXPECT_THAT(error_for(text, "e2.yaml", "algorithm: {forward", "algorithms: {forward"),
              MatchesRegex(".*e2.yaml:26: unknown key 'algorithms' in layer conv1 at batch 16 "
                           "\\(did you mean 'algorithm'\\?\\)"));
  EXPECT_THAT(error_for(text, "e3.yaml", "backward_data: \"\"", "backward_date: \"\""),
              MatchesRegex(".*e3.yaml:26: unknown key 'backward_date' in algorithm of layer "
                           "conv1 at batch 16.*"));
  EXPECT_THAT(error_for(text, "e4.yaml", "  launch_overhead:", "  launch_overhed:"),
              MatchesRegex(".*e4.yaml:12: unknown key 'launch_overhed' in microbenchmarks "
                           "\\(did you mean 'launch_overhead'\\?\\)"));
  EXPECT_THAT(error_for(text, "e5.yaml", "{from: 0, to: 1,", "{from: 0, too: 1,"),
              MatchesRegex(".*e5.yaml:17: unknown key 'too' in a peer of microbenchmarks.*"));
  EXPECT_THAT(error_for(text, "e6.yaml", "sm_count: 132", "sm_cout: 132"),
              MatchesRegex(".*e6.yaml:2: unknown key 'sm_cout' in gpu_details.*"));
}

TEST(ProfileFormat, BadValuesInTheNewPartsAreReportedAtTheirLine) {
  const std::string text = profile_to_yaml(full_profile());
  EXPECT_THAT(error_for(text, "v1.yaml", "spread: {forward: 3.1 us", "spread: {forward: 3.1"),
              MatchesRegex(".*v1.yaml:25: forward of spread of layer conv1 at batch 16: time "
                           "'3.1' has no unit.*"));
  EXPECT_THAT(error_for(text, "v2.yaml", "date: \"2026-11-22\"", "date: 22/11/2026"),
              MatchesRegex(".*v2.yaml:8: date '22/11/2026' is not a day in ISO 8601 form.*"));
  EXPECT_THAT(error_for(text, "v3.yaml", "[2048, 4096]", "[2048, big]"),
              MatchesRegex(".*v3.yaml:21: a batch of out_of_memory_batches 'big' is not a whole "
                           "number.*"));
  EXPECT_THAT(error_for(text, "v4.yaml", "device_copy_bandwidth: 4300.5 GB/s",
                        "device_copy_bandwidth: 4300.5"),
              MatchesRegex(".*v4.yaml:13: device_copy_bandwidth: bandwidth '4300.5' has no unit.*"));
  EXPECT_THAT(error_for(text, "v5.yaml", "{from: 0, to: 1,", "{from: 0, to: 0,"),
              MatchesRegex(".*v5.yaml:17: a peer goes from GPU 0 to itself.*"));
  EXPECT_THAT(error_for(text, "v6.yaml", "         algorithm: {forward: IMPLICIT_PRECOMP_GEMM, ",
                        "         algorithm: {"),
              MatchesRegex(".*v6.yaml:26: algorithm of layer conv1 at batch 16 lacks 'forward'.*"));
}

// full_profile() with the host-side costs the tool measures since the host model needs them.
MeasuredProfile profile_with_host_costs() {
  MeasuredProfile p = full_profile();
  Microbenchmarks& m = *p.header.microbenchmarks;
  m.launch = HostCallTime{{3.812e-6}, {0.041e-6}};
  m.launch_sync = HostCallTime{{9.6e-6}, {0.25e-6}};
  m.event_record = HostCallTime{{1.234e-6}, {0.005e-6}};
  m.peer_copy_issue = CopyIssue{true, {{4.5e-6}, {0.1e-6}}, {{12.125e-6}, {0.3e-6}}};
  m.host_sync_d2h = HostCallTime{{15.001e-6}, {0.5e-6}};
  return p;
}

TEST(ProfileFormat, HostSideCostsReadBackEqual) {
  MeasuredProfile written = profile_with_host_costs();
  const std::string text = profile_to_yaml(written);
  const MeasuredProfile read = load_profile(write_temp_file("host-costs.yaml", text));
  expect_profiles_equal(written, read);
  EXPECT_EQ(profile_to_yaml(read), text);
  EXPECT_THAT(text, HasSubstr("  device_to_host: 53 GB/s\n"
                              "  launch: {median: 3.812 us, spread: 0.041 us}\n"
                              "  launch_sync: {median: 9.6 us, spread: 0.25 us}\n"
                              "  event_record: {median: 1.234 us, spread: 0.005 us}\n"
                              "  peer_copy_issue: {copy: peer, issue: {median: 4.5 us, spread: "
                              "0.1 us},\n"
                              "                    round_trip: {median: 12.125 us, spread: 0.3 "
                              "us}}\n"
                              "  host_sync_d2h: {median: 15.001 us, spread: 0.5 us}\n"
                              "  peers:\n"));
  // Derived from the two launches, not stored.
  ASSERT_TRUE(read.header.microbenchmarks->sync_round_trip().has_value());
  EXPECT_NEAR(read.header.microbenchmarks->sync_round_trip()->value, 5.788e-6, 1e-13);

  // On one GPU the copy is device to device, and says so; each cost may be left out alone.
  Microbenchmarks& m = *written.header.microbenchmarks;
  m.peer_copy_issue->peer = false;
  m.launch_sync.reset();
  const std::string one_gpu = profile_to_yaml(written);
  EXPECT_THAT(one_gpu, HasSubstr("peer_copy_issue: {copy: device_to_device, "));
  EXPECT_THAT(one_gpu, Not(HasSubstr("launch_sync")));
  const MeasuredProfile read_one = load_profile(write_temp_file("host-costs-1.yaml", one_gpu));
  expect_profiles_equal(written, read_one);
  EXPECT_FALSE(read_one.header.microbenchmarks->sync_round_trip().has_value());
}

TEST(ProfileFormat, MicrobenchmarksWithoutHostSideCostsStillLoad) {
  const MeasuredProfile p =
      load_profile(write_temp_file("no-host-costs.yaml", profile_to_yaml(full_profile())));
  const Microbenchmarks& m = *p.header.microbenchmarks;
  EXPECT_NEAR(m.launch_overhead.value, 2.104e-6, 1e-13);
  EXPECT_FALSE(m.launch || m.launch_sync || m.event_record || m.peer_copy_issue ||
               m.host_sync_d2h);
  EXPECT_FALSE(m.sync_round_trip().has_value());
}

TEST(ProfileFormat, BadHostSideCostsAreReportedAtTheirLine) {
  // Lines of profile_with_host_costs()'s file: 16 launch, 18 event_record, 19 and 20
  // peer_copy_issue, 21 host_sync_d2h.
  const std::string text = profile_to_yaml(profile_with_host_costs());
  EXPECT_THAT(error_for(text, "h1.yaml", "launch: {median: 3.812 us", "launch: {median: 3.812"),
              MatchesRegex(".*h1.yaml:16: median of launch: time '3.812' has no unit.*"));
  EXPECT_THAT(error_for(text, "h2.yaml", "event_record: {median: 1.234 us, ",
                        "event_record: {"),
              MatchesRegex(".*h2.yaml:18: event_record lacks 'median'.*"));
  EXPECT_THAT(error_for(text, "h3.yaml", "{copy: peer,", "{copy: nvlink,"),
              MatchesRegex(".*h3.yaml:19: .*copy of peer_copy_issue.*'nvlink'.*"));
  EXPECT_THAT(error_for(text, "h4.yaml", "round_trip: {median", "roundtrip: {median"),
              MatchesRegex(".*h4.yaml:20: unknown key 'roundtrip' in peer_copy_issue \\(did you "
                           "mean 'round_trip'\\?\\).*"));
  EXPECT_THAT(error_for(text, "h5.yaml", "host_sync_d2h:", "host_sync_dh2:"),
              MatchesRegex(".*h5.yaml:21: unknown key 'host_sync_dh2' in microbenchmarks.*"));
}

}  // namespace
}  // namespace gpuscale::compute
