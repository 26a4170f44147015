// error.h - how the driver reports failures: one exception type carrying the
// exit status, caught once in driver.cpp.
#ifndef TIDALRT_DRIVER_ERROR_H
#define TIDALRT_DRIVER_ERROR_H

#include "tidalrt/tidalrt.h"

#include <stdexcept>
#include <string>

namespace tidalrt_driver {

// Exit statuses (docs/executable.md).
enum exit_code { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_RUNTIME_FAULT = 2 };

// A failure with its one-line reason (without the "OUT: error: " prefix).
class driver_error : public std::runtime_error {
public:
  driver_error(int code, const std::string &message)
      : std::runtime_error(message), code(code) {}
  int exit_status() const { return code; }

private:
  int code;
};

// Bad input (exit 1): a file, an option, a shape or dtype.
[[noreturn]] void fail_input(const std::string &message);
// A runtime fault (exit 2): a kernel failure, an allocation failure, a
// malformed program.
[[noreturn]] void fail_runtime(const std::string &message);

// Takes ownership of `status` and returns its message ("" for NULL).
std::string take_message(tidalrt_status_t status);

// If `status` is an error, throws it (exit 1, or 2 for OUT_OF_MEMORY and
// INTERNAL), its message prefixed with `context` when that is not empty.
void check_status(tidalrt_status_t status, const std::string &context = "");

// strerror(errno) as a string.
std::string errno_message(int error);

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_ERROR_H
