// error.cpp - the driver's failure helpers.
#include "error.h"

#include <cstring>

namespace tidalrt_driver {

void fail_input(const std::string &message) {
  throw driver_error(EXIT_BAD_INPUT, message);
}

void fail_runtime(const std::string &message) {
  throw driver_error(EXIT_RUNTIME_FAULT, message);
}

std::string take_message(tidalrt_status_t status) {
  std::string message = tidalrt_status_message(status);
  tidalrt_status_free(status);
  return message;
}

void check_status(tidalrt_status_t status, const std::string &context) {
  if (!status)
    return;
  tidalrt_status_code_t code = tidalrt_status_code(status);
  std::string message = take_message(status);
  if (!context.empty())
    message = context + ": " + message;
  if (code == TIDALRT_OUT_OF_MEMORY || code == TIDALRT_INTERNAL)
    fail_runtime(message);
  fail_input(message);
}

std::string errno_message(int error) { return std::strerror(error); }

} // namespace tidalrt_driver
