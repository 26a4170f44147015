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

// What the optimal budget fitter prices a copy it would add against: by
// op, the compute stream's clock after it, and when a copy issued after it
// could start on each direction of the link. On the cuda target a copy
// waits for the host ops before it (the host op runs 0-8.192 us), and for
// the copies before it in its direction.
TEST_F(StepTimelineTest, CopiesQueueBehindHostOpsAndCopies) {
  StepTimeline t = predictTimeline(ops, cpu, cpu, 16);
  ASSERT_EQ(t.computeDoneUs.size(), 3u);
  EXPECT_DOUBLE_EQ(t.computeDoneUs[0], 8.192);
  EXPECT_DOUBLE_EQ(t.computeDoneUs[1], 8.192);
  EXPECT_DOUBLE_EQ(t.computeDoneUs[2], 2 * 8.192);
  EXPECT_DOUBLE_EQ(t.toHostReadyUs[0], 0);
  EXPECT_DOUBLE_EQ(t.toHostReadyUs[1], 8.192);
  EXPECT_DOUBLE_EQ(t.toDeviceReadyUs[1], 8.192);

  // An offload of the first kernel's result after it: 8,192 bytes at 16
  // GB/s plus the default link's latency, queued from the kernel's end.
  constexpr const char *kCopies = R"mlir(
func.func @copies(%a: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = "tidal.relu"(%a) : (tensor<1024xf32>) -> tensor<1024xf32>
  %1 = tidal.offload %0 : tensor<1024xf32>
  %2 = "tidal.relu"(%0) : (tensor<1024xf32>) -> tensor<1024xf32>
  return %2 : tensor<1024xf32>
}
)mlir";
  OwningOpRef<ModuleOp> copies = parseSourceString<ModuleOp>(kCopies, &context);
  ASSERT_TRUE(copies);
  std::vector<Operation *> copyOps;
  for (Operation &op : copies->lookupSymbol<func::FuncOp>("copies")
                           .getBody()
                           .front()
                           .without_terminator())
    copyOps.push_back(&op);
  StepTimeline c = predictTimeline(copyOps, cpu, cpu, 16);
  ASSERT_EQ(c.toHostReadyUs.size(), 3u);
  const double copyUs = c.costs[1].us;
  EXPECT_GT(copyUs, 8192 / 16e3);
  EXPECT_DOUBLE_EQ(c.toHostReadyUs[0], 0);
  EXPECT_DOUBLE_EQ(c.toHostReadyUs[1], 8.192 + copyUs);
  EXPECT_DOUBLE_EQ(c.toHostReadyUs[2], 8.192 + copyUs);
  EXPECT_DOUBLE_EQ(c.toDeviceReadyUs[2], 0);
  EXPECT_DOUBLE_EQ(c.computeDoneUs[2], 2 * 8.192);
}

} // namespace
