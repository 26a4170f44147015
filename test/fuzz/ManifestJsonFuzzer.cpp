//===- ManifestJsonFuzzer.cpp - fuzz the program manifest reader ----------===//
//
// Bytes -> tidalrt_driver::parse_manifest, which every generated executable
// runs on the manifest tidalc compiled into it (lib/Target/Manifest.cpp
// writes it). The text is NUL-terminated as in the executable and checked
// against a 4 GiB program blob. It must return a manifest or throw
// driver_error; any other exception or crash is a bug. The accessors the
// driver calls next run on what it returns.
//
//===----------------------------------------------------------------------===//

#include "error.h"
#include "manifest.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace tidalrt_driver;

static void touch(const function_info &function) {
  for (const tensor_slot &slot : function.args) {
    (void)slot.element_count();
    (void)describe_slot(slot, true);
    (void)function.find_arg(slot.name);
  }
  for (const tensor_slot &slot : function.results)
    (void)describe_slot(slot);
  (void)function.data_inputs();
  (void)function.loss_result();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  try {
    manifest m = parse_manifest(text.c_str(), uint64_t(1) << 32);
    touch(m.step);
    if (m.predict)
      touch(*m.predict);
    for (const blob_range &range : m.embedded)
      (void)m.find_embedded(range.name);
  } catch (const driver_error &e) {
    if (e.exit_status() != EXIT_RUNTIME_FAULT) {
      std::fprintf(stderr, "manifest fuzzer: exit status %d for '%s'\n",
                   e.exit_status(), e.what());
      std::abort();
    }
  }
  return 0;
}
