#!/usr/bin/env bash
# Builds the whole project with AddressSanitizer and UndefinedBehavior-
# Sanitizer in build-asan (or $1) and runs every test suite against it
# (scripts/run_tests.py: lit, CTest, the Python tests, clang-format), so
# that the compiler, the runtime and the generated executables the tests
# link all run instrumented (docs/fuzzing.md).
#
# - gcc, -fsanitize=address,undefined -fno-sanitize-recover=undefined
#   (UB ends the process), -O2, NDEBUG as in the shipped build. CUDA is off
#   (no GPU here; the cuda lit tests report UNSUPPORTED).
# - Executables that tidalc links go through $build/sanitize-c++, which
#   adds the sanitizer runtimes (TIDAL_CXX).
# - Every report aborts the process (abort_on_error=1), so it cannot pass
#   for the driver's own exit statuses 1 and 2, and is written to
#   $build/sanitizer-logs/ instead of stderr, so that tests that compare
#   output fail only on the abort. The script lists the reports at the
#   end and fails if there is any, even from a process whose exit status
#   no test checked.
# - Leak detection is on. scripts/lsan.supp suppresses leaks in
#   uninstrumented third-party libraries only; each entry says why.
#
# TIDAL_JOBS sets the build's parallelism (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
build="$(realpath -m "${1:-$root/build-asan}")"
jobs="${TIDAL_JOBS:-$(nproc)}"
sanitizers="-fsanitize=address,undefined"

flags="$sanitizers -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g1"
cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DTIDAL_ENABLE_CUDA=OFF >/dev/null
nice -n 10 ninja -C "$build" -j "$jobs"

cat >"$build/sanitize-c++" <<WRAP
#!/bin/sh
# tidalc's C++ driver in the sanitizer build (scripts/sanitize.sh).
exec env -u LD_PRELOAD g++ $sanitizers "\$@"
WRAP
chmod +x "$build/sanitize-c++"
export TIDAL_CXX="$build/sanitize-c++"

logs="$build/sanitizer-logs"
rm -rf "$logs"
mkdir -p "$logs"
# allow_user_poisoning=0: LLVM's BumpPtrAllocator, inlined into tidal's
# instrumented code, poisons slabs that the uninstrumented libMLIR.so then
# hands out and writes without unpoisoning: false use-after-poison reports
# in libMLIR's memcpy (seen in StringAttr::get, DenseElementsAttr::getRaw).
common="abort_on_error=1:allow_user_poisoning=0:log_path=$logs/report"
export ASAN_OPTIONS="$common:detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="$common:print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:${LSAN_OPTIONS:-}"

# The Python phase: the interpreter loads instrumented libraries (--emit
# lib) through ctypes, which ASan allows only with its runtime loaded first,
# so the runtimes are preloaded there (and inherited by what the tests
# start; the C++ driver above drops them). Leak detection is off in that
# phase: the interpreter's own allocations at exit would all be reported.
export TIDAL_PYTHON_TESTS_ENV="LD_PRELOAD=$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)
ASAN_OPTIONS=$common:detect_leaks=0"

set +e
/usr/bin/python3 scripts/run_tests.py "$build"
status=$?
set -e

reports=("$logs"/report*)
if [ -e "${reports[0]}" ]; then
  echo
  echo "===== sanitizer reports (${#reports[@]} files in $logs)"
  grep -h "^SUMMARY:" "${reports[@]}" | sort | uniq -c | sort -rn
  status=1
else
  echo "sanitize: no sanitizer report"
fi
exit "$status"
