// Each claim form of the tiny suite (tiny_suite.cpp) on predictions made by hand: one set that
// makes the claim hold, one that makes it fail; `within_pct: null` reports without a verdict and
// not_checked claims keep their reason.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/validation/tiny_suite.hpp"
#include "validation/src/claims.hpp"

namespace gpuscale::validation {
namespace {

using testing::ideal_run;
using testing::RunModel;

const Suite& suite() {
  static const Suite s = load_suite(testing::write_suite(testing::tiny_suite_files()));
  return s;
}

ClaimResult evaluate(const std::string& id, const Metrics& m) {
  for (const Claim& c : suite().claims) {
    if (c.id == id) return evaluate_claim(c, m);
  }
  ADD_FAILURE() << "no claim " << id;
  return {};
}

std::optional<bool> holds(const std::string& id, const RunModel& run, int largest_batch = 100) {
  return evaluate(id, testing::metrics_of(suite(), run, largest_batch)).holds;
}

// `ideal_run` with the iteration time (FP+BP + WU) recomputed after `change`.
RunModel ideal_but(const std::function<void(PredictedRun&, const RunKey&)>& change) {
  return [change](const RunKey& key) {
    PredictedRun r = ideal_run(key);
    change(r, key);
    r.iteration_s = r.fpbp_s + r.wu_s;
    return r;
  };
}

TEST(Claims, FasterOnEpochTime) {
  EXPECT_EQ(holds("p2p-faster", ideal_but([](PredictedRun& r, const RunKey& k) {
                    if (k.method == "NCCL") r.fpbp_s *= 2;
                  })),
            true);
  EXPECT_EQ(holds("p2p-faster", ideal_run), false);  // equal is not faster
  // Within the claim's 1% margin a difference is a tie: neither method outperforms.
  const auto nccl_slower_by = [](double factor) {
    return ideal_but([factor](PredictedRun& r, const RunKey& k) {
      if (k.method == "NCCL") r.fpbp_s *= factor;
    });
  };
  EXPECT_EQ(holds("p2p-faster", nccl_slower_by(1.005)), false);
  EXPECT_EQ(holds("p2p-faster", nccl_slower_by(1.02)), true);
}

TEST(Claims, FasterOnSpeedup) {
  EXPECT_EQ(holds("nccl-better-speedup", ideal_but([](PredictedRun& r, const RunKey& k) {
                    if (k.method == "P2P") r.wu_s *= k.gpus;
                  })),
            true);
  EXPECT_EQ(holds("nccl-better-speedup", ideal_run), false);
}

TEST(Claims, SimilarSpeedup) {
  EXPECT_EQ(holds("similar", ideal_run), true);
  EXPECT_EQ(holds("similar", ideal_but([](PredictedRun& r, const RunKey& k) {
                    if (k.network == "ResNet") r.fpbp_s *= k.gpus;
                  })),
            false);
}

TEST(Claims, SublinearSpeedup) {
  // Ideal runs keep the iteration on every G: the speedup is exactly G, which is not below it.
  EXPECT_EQ(holds("sublinear", ideal_run), false);
  EXPECT_EQ(holds("sublinear", ideal_but([](PredictedRun& r, const RunKey& k) {
                    if (k.gpus > 1) r.wu_s += 0.001;
                  })),
            true);
}

TEST(Claims, BetterSpeedupThanAnotherNetwork) {
  const auto lenet_slower_by = [](double factor) {
    return ideal_but([factor](PredictedRun& r, const RunKey& k) {
      if (k.network == "LeNet" && k.gpus > 1) r.fpbp_s *= factor;
    });
  };
  EXPECT_EQ(holds("scales-better", lenet_slower_by(1.5)), true);
  EXPECT_EQ(holds("scales-better", ideal_run), false);  // the same speedup is not better
  EXPECT_EQ(holds("scales-better", lenet_slower_by(1.005)), false);  // a tie, within 1%
}

TEST(Claims, BatchLinearWithAndWithoutTolerance) {
  // A constant iteration time: the epoch halves when the batch doubles.
  EXPECT_EQ(holds("linear-in-batch", ideal_run), true);
  const RunModel proportional = ideal_but([](PredictedRun& r, const RunKey& k) {
    r.fpbp_s *= k.batch;
    r.wu_s *= k.batch;
  });
  EXPECT_EQ(holds("linear-in-batch", proportional), false);
  const ClaimResult open =
      evaluate("linear-in-batch-no-tolerance", testing::metrics_of(suite(), proportional));
  EXPECT_FALSE(open.holds.has_value());
  ASSERT_EQ(open.checks.size(), 1u);
  EXPECT_NEAR(open.checks[0].value, 100, 1e-9);  // T(32) x 32 = 2 x T(16) x 16
  EXPECT_FALSE(open.checks[0].holds.has_value());
}

TEST(Claims, WuFallsWithBatch) {
  EXPECT_EQ(holds("wu-falls-with-batch", ideal_run), true);
  EXPECT_EQ(holds("wu-falls-with-batch",
                  ideal_but([](PredictedRun& r, const RunKey& k) { r.wu_s *= k.batch * k.batch; })),
            false);
}

TEST(Claims, WuLinearInGpus) {
  EXPECT_EQ(holds("wu-linear", ideal_run), true);
  EXPECT_EQ(
      holds("wu-linear", ideal_but([](PredictedRun& r, const RunKey& k) { r.wu_s *= k.gpus; })),
      false);
}

TEST(Claims, WuBetterThanAnotherNetwork) {
  EXPECT_EQ(holds("wu-better", ideal_but([](PredictedRun& r, const RunKey& k) {
                    if (k.network == "ResNet") r.wu_s /= k.gpus;
                  })),
            true);
  EXPECT_EQ(holds("wu-better", ideal_run), false);  // the same WU speedup is not better
}

TEST(Claims, FpbpAtLeastIsStrictWhenAsked) {
  // G-independent per-image cost gives exactly 2 from 1 to 2 GPUs: not "> 2".
  EXPECT_EQ(holds("fpbp-superlinear", ideal_run), false);
  EXPECT_EQ(holds("fpbp-superlinear", ideal_but([](PredictedRun& r, const RunKey& k) {
                    if (k.gpus == 1) r.fpbp_s *= 1.2;
                  })),
            true);
}

TEST(Claims, FpbpAtLeastPerGpuCount) {
  EXPECT_EQ(holds("fpbp-near-linear", ideal_run), true);
  EXPECT_EQ(holds("fpbp-near-linear", ideal_but([](PredictedRun& r, const RunKey& k) {
                    r.fpbp_s *= std::sqrt(k.gpus);
                  })),
            false);
}

TEST(Claims, FpbpAtMostPerStep) {
  EXPECT_EQ(holds("fpbp-sublinear", ideal_run), false);
  EXPECT_EQ(holds("fpbp-sublinear", ideal_but([](PredictedRun& r, const RunKey& k) {
                    r.fpbp_s *= std::pow(k.gpus, 0.2);
                  })),
            true);
}

TEST(Claims, MemoryOfTheMethodsWithin) {
  EXPECT_EQ(holds("memory-within", ideal_run), true);
  EXPECT_EQ(holds("memory-within", ideal_but([](PredictedRun& r, const RunKey& k) {
                    if (k.method == "P2P") r.memory_gpu0_gb *= 1.06;
                  })),
            false);
}

TEST(Claims, Gpu0HoldsMore) {
  EXPECT_EQ(holds("gpu0-more", ideal_run), true);
  EXPECT_EQ(holds("gpu0-more", ideal_but([](PredictedRun& r, const RunKey&) {
                    r.memory_gpu0_gb = r.memory_gpux_gb;
                  })),
            false);
}

TEST(Claims, MaxBatchInItsRange) {
  EXPECT_EQ(holds("max-batch", ideal_run, 64), true);
  EXPECT_EQ(holds("max-batch", ideal_run, 127), true);
  EXPECT_EQ(holds("max-batch", ideal_run, 63), false);
  EXPECT_EQ(holds("max-batch", ideal_run, 128), false);
}

TEST(Claims, WeakVersusStrongScaling) {
  // Equal iterations per image: no reduction, within [0, 12].
  EXPECT_EQ(holds("weak-vs-strong", ideal_run), true);
  // Fewer weak images per GPU than strong ones: 21.9% less time per image, past 12.
  validation::Suite fewer = suite();
  fewer.setup.weak_images_per_gpu = 200000;
  const Metrics weak_fewer(fewer, [&] {
    Predictions p;
    for (const char* net : {"LeNet", "ResNet"}) {
      for (int g : {1, 2, 4, 8}) {
        for (int b : {16, 32}) p.runs[{net, "P2P", g, b}] = ideal_run({});
      }
      p.strong_images[net] = fewer.setup.strong_images;
    }
    return p;
  }());
  const ClaimResult r = evaluate("weak-vs-strong", weak_fewer);
  EXPECT_EQ(r.holds, false);
  EXPECT_NEAR(r.checks.at(0).value, 100 * (1 - 200000.0 / 256000), 1e-9);
}

TEST(Claims, NotCheckedKeepsItsReason) {
  const ClaimResult r = evaluate("unchecked", testing::metrics_of(suite(), ideal_run));
  EXPECT_FALSE(r.holds.has_value());
  EXPECT_TRUE(r.checks.empty());
  EXPECT_EQ(r.why_not_checked, "Fits no kind. Kept for the record.");
}

}  // namespace
}  // namespace gpuscale::validation
