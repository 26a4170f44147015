//===- ProfileJsonFuzzer.cpp - fuzz the machine profile reader ------------===//
//
// Bytes -> parseMachineProfile, the reader behind tidalc --device-profile,
// the planners' `profile` option and tidal-calibrate --from/--check
// (loadMachineProfile reads the file and calls it). It must accept a
// profile or fail with "NAME: reason"; a profile it accepts must pass
// validateMachineProfile, and machineProfileJson's text of it must read
// back to the same text (DeviceProfile.h promises the round trip).
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/Analysis/DeviceProfile.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mlir::tidal;

static void check(bool condition, const char *what, const std::string &text) {
  if (!condition) {
    std::fprintf(stderr, "profile-json fuzzer: %s\n%s\n", what, text.c_str());
    std::abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef json(reinterpret_cast<const char *>(data), size);
  std::string error;
  mlir::FailureOr<MachineProfile> profile =
      parseMachineProfile(json, "fuzz.json", error);
  if (mlir::failed(profile)) {
    check(llvm::StringRef(error).starts_with("fuzz.json: "),
          "the error does not start with the name", error);
    return 0;
  }
  check(error.empty(), "success with an error", error);
  check(validateMachineProfile(*profile).empty(),
        "an accepted profile does not validate", std::string(json));

  std::string text = machineProfileJson(*profile);
  mlir::FailureOr<MachineProfile> again =
      parseMachineProfile(text, "written.json", error);
  check(mlir::succeeded(again), "the written profile does not read back",
        text + "\n" + error);
  check(machineProfileJson(*again) == text,
        "the written profile reads back different", text);
  return 0;
}
