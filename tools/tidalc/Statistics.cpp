//===- Statistics.cpp - what tidalc -v reports about a module -------------===//

#include "Statistics.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Format.h"

using namespace mlir;

static int64_t byteSize(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape())
    return 0;
  int64_t bits = t.getElementType().getIntOrFloatBitWidth();
  return t.getNumElements() * std::max<int64_t>(1, bits / 8);
}

static std::string humanBytes(int64_t b) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format(u ? "%.2f %s" : "%.0f %s", v, units[u]);
  return s;
}

void tidalc::printStatistics(ModuleOp module, llvm::raw_ostream &os) {
  module.walk([&](func::FuncOp func) {
    os << "function @" << func.getName() << "\n";
    // Arguments by role.
    llvm::MapVector<StringRef, std::pair<int64_t, int64_t>> roles;
    int64_t paramElements = 0;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto role =
          func.getArgAttrOfType<tidal::ArgRoleAttr>(i, tidal::kRoleAttr);
      StringRef name =
          role ? tidal::stringifyArgRole(role.getValue()) : "other";
      auto &entry = roles[name];
      entry.first += 1;
      entry.second += byteSize(func.getArgument(i).getType());
      if (role && role.getValue() == tidal::ArgRole::param)
        paramElements += cast<RankedTensorType>(func.getArgument(i).getType())
                             .getNumElements();
    }
    for (auto &[role, e] : roles)
      os << llvm::format("  %-10s %6lld arguments  %12s\n", role.str().c_str(),
                         (long long)e.first, humanBytes(e.second).c_str());
    os << "  trainable parameters: " << paramElements << "\n";
    os << "  results: " << func.getNumResults() << "\n";

    // Ops by kind and the bytes they produce.
    llvm::MapVector<StringRef, int64_t> ops;
    int64_t total = 0, produced = 0;
    func.walk([&](Operation *op) {
      if (op == func.getOperation())
        return;
      ++ops[op->getName().getStringRef()];
      ++total;
      for (Value r : op->getResults())
        produced += byteSize(r.getType());
    });
    os << "  ops: " << total << "\n";
    llvm::SmallVector<std::pair<StringRef, int64_t>> sorted(ops.begin(),
                                                            ops.end());
    llvm::stable_sort(sorted,
                      [](auto &a, auto &b) { return a.second > b.second; });
    for (auto &[name, count] : sorted)
      os << llvm::format("    %-34s %6lld\n", name.str().c_str(),
                         (long long)count);
    os << "  bytes produced by ops (no reuse): " << humanBytes(produced)
       << "\n";
  });
}
