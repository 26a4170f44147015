//===- FlatStepTest.cpp - a FlatStep updated equals a fresh walk ----------===//
//
// The budget fitter analyses its function from a FlatStep that it updates
// with the ops it inserted, moved and rewired. Each test edits a step the
// way the fitter does (copies inserted around a tensor, its later uses
// rewired, a copy moved, ops inserted at the ends of the block) and checks
// that the analysis of the updated FlatStep is the analysis of the IR.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/Analysis/FlatStep.h"
#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/IR/TidalDialect.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseSet.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::tidal;

namespace {

constexpr const char *kStep = R"mlir(
func.func @step(%x: tensor<2x8xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %w: tensor<8xf32> {tidal.name = "w", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>},
        tensor<8xf32> {tidal.name = "w", tidal.role = #tidal<role param>}) {
  %0 = tidal.mul %x, %w : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %1 = tidal.relu %0 : tensor<2x8xf32>
  %2 = tidal.reshape %1 {shape = array<i64: 16>} : (tensor<2x8xf32>) -> tensor<16xf32>
  %3 = tidal.reduce_sum %2 {axes = array<i64: 0>, keepdims = false} : (tensor<16xf32>) -> tensor<f32>
  %4 = tidal.relu_backward %1, %1 : tensor<2x8xf32>
  %5 = tidal.reduce_sum %4 {axes = array<i64: 0>, keepdims = false} : (tensor<2x8xf32>) -> tensor<8xf32>
  %6 = tidal.sgd_update %w, %5 {lr = 1.0e-01 : f64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %3, %6 : tensor<f32>, tensor<8xf32>
}
)mlir";

/// Everything an analysis answers, as text: ops in order, buffers with
/// their values, in-place uses, returned constants, bytes live.
std::string describe(const BufferLiveness &l) {
  std::string s;
  llvm::raw_string_ostream os(s);
  DenseMap<Value, unsigned> names;
  auto name = [&](Value v) {
    return names.try_emplace(v, names.size()).first->second;
  };
  for (BlockArgument arg : l.getFunction().getArguments())
    name(arg);
  for (Operation *op : l.getOps()) {
    os << "op " << l.getPosition(op) << " " << op->getName() << ":";
    for (Value v : op->getOperands())
      os << " " << name(v);
    for (Value v : op->getResults()) {
      os << " ->" << name(v) << "@" << l.getDefinition(v) << ".."
         << l.getLastUse(v) << " uses";
      BufferLiveness::Uses uses = l.getUses(v);
      for (uint32_t p : uses.positions)
        os << " " << p;
      os << (uses.notOnlyKernels ? " +other" : "");
    }
    os << "\n";
  }
  for (const Buffer &b : l.getBuffers()) {
    os << "buffer " << b.id << " " << b.bytes << " [" << b.start << "," << b.end
       << "]" << b.persistent << b.returned << b.host << ":";
    for (Value v : b.values)
      os << " " << name(v) << (l.getBuffer(v) == &b ? "" : "!");
    os << "\n";
  }
  for (const InPlaceUse &u : l.getInPlaceUses())
    os << "in-place " << name(u.result) << "<-" << name(u.operand) << "@"
       << u.position << "\n";
  for (Value v : l.getReturnedConstants())
    os << "constant " << name(v) << "\n";
  for (int64_t b : l.liveBytes(64))
    os << b << " ";
  return s;
}

/// Records the ops a builder inserts, as the fitter's listener does.
struct Inserted : OpBuilder::Listener {
  std::vector<Operation *> ops;
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
};

class FlatStepTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<func::FuncDialect, TidalDialect>();
    module = parseSourceString<ModuleOp>(kStep, &context);
    ASSERT_TRUE(module);
    func = module->lookupSymbol<func::FuncOp>("step");
    for (Operation &op : func.getBody().front().without_terminator())
      ops.push_back(&op);
  }
  /// Uses of `from` at `next` or later read `to` (the fitter's
  /// replaceFrom), their ops added to `rewired`.
  void rewire(Value from, Value to, Operation *next) {
    from.replaceUsesWithIf(to, [&](OpOperand &use) {
      Operation *user = use.getOwner();
      bool replace = user != to.getDefiningOp() &&
                     (user == next || next->isBeforeInBlock(user));
      if (replace)
        rewired.insert(user);
      return replace;
    });
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  std::vector<Operation *> ops;
  Inserted inserted;
  DenseSet<Operation *> rewired;
};

// The FlatStep of the unedited step analyses as the IR does.
TEST_F(FlatStepTest, AFreshFlatStepIsTheIR) {
  FlatStep flat(func);
  EXPECT_EQ(describe(BufferLiveness(flat)), describe(BufferLiveness(func)));
  EXPECT_EQ(describe(BufferLiveness(flat, /*inPlace=*/false)),
            describe(BufferLiveness(func, /*inPlace=*/false)));
  // %1 is read by the reshape (a view) at 3 and twice by relu_backward at
  // 5; %4 by the reduce_sum at 6 alone; the loss by the return.
  BufferLiveness l(flat);
  BufferLiveness::Uses relu = l.getResultUses(2, 0);
  EXPECT_EQ(std::vector<uint32_t>(relu.positions.begin(), relu.positions.end()),
            (std::vector<uint32_t>{3, 5, 5}));
  EXPECT_TRUE(relu.notOnlyKernels);
  BufferLiveness::Uses grad = l.getUses(ops[4]->getResult(0));
  EXPECT_EQ(std::vector<uint32_t>(grad.positions.begin(), grad.positions.end()),
            (std::vector<uint32_t>{6}));
  EXPECT_FALSE(grad.notOnlyKernels);
  EXPECT_TRUE(l.getResultUses(4, 0).notOnlyKernels);
  EXPECT_TRUE(l.getUses(func.getArgument(1)).notOnlyKernels == false);
}

// %1 swapped out after its reshape's use and back before relu_backward
// (both its operands rewired), an op inserted before the first and one
// before the return; then the prefetch moved later. Each update equals a
// fresh walk; a FlatStep not told of the edits does not.
TEST_F(FlatStepTest, UpdatesEqualAFreshWalk) {
  FlatStep flat(func), stale(func);
  Location loc = func.getLoc();
  Value relu = ops[1]->getResult(0);
  OpBuilder b(&context, &inserted);
  b.setInsertionPointAfter(ops[2]);
  Value offload = b.create<OffloadOp>(loc, relu);
  Value host = b.create<WaitOp>(loc, offload);
  b.setInsertionPoint(ops[3]);
  auto prefetch = b.create<PrefetchOp>(loc, host);
  b.setInsertionPoint(ops[4]);
  Value back = b.create<WaitOp>(loc, prefetch);
  rewire(relu, back, ops[4]);
  b.setInsertionPoint(ops[0]);
  b.create<ReluOp>(loc, func.getArgument(0));
  b.setInsertionPoint(func.getBody().front().getTerminator());
  b.create<ReluOp>(loc, ops[5]->getResult(0));

  flat.update(inserted.ops, {}, rewired);
  const std::string fresh = describe(BufferLiveness(func));
  EXPECT_EQ(describe(BufferLiveness(flat)), fresh);
  EXPECT_NE(describe(BufferLiveness(stale)), fresh);

  // The prefetch delayed past the reduce_sum, as pick's DelayPrefetch.
  inserted.ops.clear();
  rewired.clear();
  prefetch->moveBefore(back.getDefiningOp());
  Operation *moved = prefetch;
  flat.update({}, moved, rewired);
  EXPECT_EQ(describe(BufferLiveness(flat)), describe(BufferLiveness(func)));
  EXPECT_EQ(BufferLiveness(flat).getPosition(prefetch),
            BufferLiveness(flat).getPosition(back.getDefiningOp()) - 1);
}

// Ops inserted next to each other, some before others of the same batch,
// keep their block order; an op made after the update is in no analysis.
TEST_F(FlatStepTest, InsertedRunsKeepTheirOrder) {
  FlatStep flat(func);
  Location loc = func.getLoc();
  OpBuilder b(&context, &inserted);
  b.setInsertionPoint(ops[4]);
  Value a = b.create<ReluOp>(loc, ops[1]->getResult(0));
  b.setInsertionPoint(a.getDefiningOp());
  Value c = b.create<ReluOp>(loc, ops[0]->getResult(0));
  b.setInsertionPointAfter(a.getDefiningOp());
  b.create<ReluOp>(loc, a);
  b.create<ReluOp>(loc, c);
  flat.update(inserted.ops, {}, rewired);
  BufferLiveness l(flat);
  EXPECT_EQ(describe(l), describe(BufferLiveness(func)));
  EXPECT_EQ(l.getPosition(c.getDefiningOp()), 5);
  EXPECT_EQ(l.getPosition(a.getDefiningOp()), 6);

  OpBuilder later(ops[0]);
  Value made = later.create<ReluOp>(loc, func.getArgument(0));
  EXPECT_EQ(l.getPosition(made.getDefiningOp()), 0);
  EXPECT_EQ(l.getBuffer(made), nullptr);
}

} // namespace
