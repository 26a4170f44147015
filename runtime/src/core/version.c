/* version.c - the ABI version this runtime implements. */
#include "tidalrt/tidalrt.h"

uint32_t tidalrt_abi_version(void) { return TIDALRT_ABI_VERSION; }

tidalrt_status_t tidalrt_abi_check(uint32_t major, uint32_t minor) {
  if (major == TIDALRT_ABI_VERSION_MAJOR && minor <= TIDALRT_ABI_VERSION_MINOR)
    return NULL;
  return tidalrt_status_make(
      TIDALRT_UNSUPPORTED,
      "the code was built for tidalrt ABI %u.%u, but the linked runtime "
      "implements %u.%u",
      (unsigned)major, (unsigned)minor, (unsigned)TIDALRT_ABI_VERSION_MAJOR,
      (unsigned)TIDALRT_ABI_VERSION_MINOR);
}
