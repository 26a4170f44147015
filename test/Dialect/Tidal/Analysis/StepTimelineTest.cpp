//===- StepTimelineTest.cpp - the predicted step's streams ----------------===//

#include "tidal/Dialect/Tidal/Analysis/StepTimeline.h"
#include "tidal/Dialect/Tidal/IR/TidalDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::tidal;

namespace {

// Two device kernels with a host-placed op between them in the schedule,
// independent of the first. Each moves 8,192 bytes and does 1,024 flops.
constexpr const char *kStep = R"mlir(
func.func @step(%a: tensor<1024xf32>, %b: tensor<1024xf32>)
    -> (tensor<1024xf32>, tensor<1024xf32>) {
  %0 = "tidal.relu"(%a) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = "tidal.relu"(%b) {tidal.device = "host"}
      : (tensor<1024xf32>) -> tensor<1024xf32>
  %2 = "tidal.relu"(%0) : (tensor<1024xf32>) -> tensor<1024xf32>
  return %1, %2 : tensor<1024xf32>, tensor<1024xf32>
}
)mlir";

class StepTimelineTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<func::FuncDialect, TidalDialect>();
    module = parseSourceString<ModuleOp>(kStep, &context);
    ASSERT_TRUE(module);
    auto func = module->lookupSymbol<func::FuncOp>("step");
    for (Operation &op : func.getBody().front().without_terminator())
      ops.push_back(&op);
    // 1 GB/s and 1 GFLOP/s, no overhead: each kernel takes 8.192 us.
    cpu.name = "test";
    cpu.gflops = 1;
    cpu.gbytesPerS = 1;
    cpu.opOverheadUs = 0;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::vector<Operation *> ops;
  DeviceProfile cpu;
};

// A device with its own processor (cuda): the host op runs beside the
// first kernel, and the step is two kernels long.
TEST_F(StepTimelineTest, HostOpsOverlapTheDevicesKernels) {
  StepTimeline t = predictTimeline(ops, cpu, cpu, 16);
  ASSERT_EQ(t.startUs.size(), 3u);
  EXPECT_STREQ(t.streams[1], "host");
  EXPECT_DOUBLE_EQ(t.costs[0].us, 8.192);
  EXPECT_DOUBLE_EQ(t.startUs[0], 0);
  EXPECT_DOUBLE_EQ(t.startUs[1], 0);
  EXPECT_DOUBLE_EQ(t.startUs[2], 8.192);
  EXPECT_DOUBLE_EQ(t.stepUs, 2 * 8.192);
}

// The sim device is the same CPU, one kernel at a time: the host op waits
// for the kernel running when it is launched, the next kernel waits for
// it, and the step is all three kernels long.
TEST_F(StepTimelineTest, OnASharedCpuKernelsTakeTurns) {
  StepTimeline t = predictTimeline(ops, cpu, cpu, 16, /*sharedCpu=*/true);
  ASSERT_EQ(t.startUs.size(), 3u);
  EXPECT_DOUBLE_EQ(t.startUs[0], 0);
  EXPECT_DOUBLE_EQ(t.startUs[1], 8.192);
  EXPECT_DOUBLE_EQ(t.startUs[2], 2 * 8.192);
  EXPECT_DOUBLE_EQ(t.stepUs, 3 * 8.192);
  EXPECT_DOUBLE_EQ(t.stallUs, 0);
}

} // namespace
