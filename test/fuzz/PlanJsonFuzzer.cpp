//===- PlanJsonFuzzer.cpp - fuzz the plan document reader -----------------===//
//
// Bytes -> explainPlan, tidal's only reader of a plan document (tidalc
// --explain reads back the plan it wrote, and the all-device plan next to
// it). The input is the plan, optionally followed by a NUL byte and the
// all-device plan. explainPlan must explain it or fail with a message.
//
//===----------------------------------------------------------------------===//

#include "tidal/Target/PlanExplain.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto [plan, allDevice] = input.split('\0');
  std::string text, error;
  bool ok = mlir::tidal::explainPlan(plan, allDevice, text, error);
  if (ok == error.empty())
    return 0;
  std::fprintf(stderr,
               "plan-json fuzzer: explainPlan returned %s with "
               "error '%s'\n",
               ok ? "true" : "false", error.c_str());
  std::abort();
}
