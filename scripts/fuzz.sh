#!/usr/bin/env bash
# Runs one libFuzzer harness (docs/fuzzing.md):
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer arguments...]
# TARGET: importer, npy, checkpoint, manifest-json, profile-json, plan-json.
#
# Configures build-fuzz (or $TIDAL_FUZZ_BUILD) once with clang-19: the
# project code with -fsanitize=fuzzer-no-link,address,undefined (UB is
# fatal, assertions of the MLIR/LLVM headers on), the harness linked with
# -fsanitize=fuzzer (TIDAL_LIBFUZZER=ON in test/fuzz/CMakeLists.txt). Builds
# only tidal-fuzz-TARGET, copies test/fuzz/corpus/TARGET and
# test/fuzz/regressions/TARGET to build-fuzz/runs/TARGET/corpus (new
# inputs go there; TIDAL_FUZZ_KEEP=1 keeps an earlier run's) and fuzzes for
# SECONDS with leak detection, a per-input timeout of $TIDAL_FUZZ_TIMEOUT
# seconds (default 10), libFuzzer's 2 GiB memory limit and inputs of at
# most $TIDAL_FUZZ_MAX_LEN bytes (default 128 KiB; otherwise the largest
# regression input, 200 KB, sets the limit and slows every target down).
# Crashes, timeouts, leaks and out-of-memory inputs are written to
# build-fuzz/runs/TARGET/artifacts/; the summary at the end
# says how to keep one as a regression input.
#
# clang-19 and its runtimes come from Debian (clang-19 libclang-rt-19-dev):
# installed here when running as root, else the script says what to
# install. TIDAL_JOBS sets the build's parallelism (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
targets="importer npy checkpoint manifest-json profile-json plan-json"
if [ $# -lt 2 ] || ! [[ " $targets " == *" $1 "* ]] ||
  ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 TARGET SECONDS [libFuzzer arguments...]" >&2
  echo "TARGET: $targets" >&2
  exit 2
fi
target="$1"
seconds="$2"
shift 2
build="${TIDAL_FUZZ_BUILD:-$root/build-fuzz}"
jobs="${TIDAL_JOBS:-$(nproc)}"

have_clang() {
  command -v clang++-19 >/dev/null &&
    [ -e "$(clang-19 -print-file-name=libclang_rt.fuzzer-x86_64.a)" ]
}
if ! have_clang; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing clang-19 and libclang-rt-19-dev"
    apt-get install -y -q clang-19 libclang-rt-19-dev >/dev/null ||
      { apt-get update -q >/dev/null &&
        apt-get install -y -q clang-19 libclang-rt-19-dev >/dev/null; }
  else
    echo "fuzz.sh: needs clang-19 with libFuzzer; as root run:" >&2
    echo "  apt-get install clang-19 libclang-rt-19-dev" >&2
    exit 1
  fi
fi

if [ ! -f "$build/build.ninja" ]; then
  flags="-fsanitize=fuzzer-no-link,address,undefined"
  flags="$flags -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
  # RelWithDebInfo without -DNDEBUG: the asserts in LLVM's and MLIR's
  # headers (cast<>, StringRef bounds) turn silent misuse into a crash.
  # OpenMP (which the runtime's configuration requires) is GCC's libgomp,
  # which oneDNN uses: clang has no libomp here.
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1" \
    -DTIDAL_LIBFUZZER=ON -DTIDAL_ENABLE_CUDA=OFF \
    -DOpenMP_CXX_FLAGS=-fopenmp=libgomp -DOpenMP_CXX_LIB_NAMES=gomp \
    -DOpenMP_gomp_LIBRARY="$(g++ -print-file-name=libgomp.so)" >/dev/null
fi
nice -n 10 ninja -C "$build" -j "$jobs" "tidal-fuzz-$target"

run="$build/runs/$target"
# TIDAL_FUZZ_KEEP=1 continues from the inputs an earlier run added.
[ "${TIDAL_FUZZ_KEEP:-0}" = 1 ] || rm -rf "$run/corpus"
mkdir -p "$run/corpus" "$run/artifacts"
cp test/fuzz/corpus/"$target"/* "$run/corpus/"
find test/fuzz/regressions/"$target" -type f ! -name '.*' \
  -exec cp {} "$run/corpus/" \;
before="$(ls "$run/artifacts" | wc -l)"

# allow_user_poisoning=0: see scripts/sanitize.sh (LLVM's allocators are
# inlined instrumented but run uninstrumented inside libMLIR.so).
export ASAN_OPTIONS="detect_leaks=1:allow_user_poisoning=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
log="$run/fuzz.log"
echo "== fuzzing $target for $seconds s (log: $log)"
set +e
nice -n 10 "$build/bin/tidal-fuzz-$target" "$run/corpus" \
  -max_total_time="$seconds" -timeout="${TIDAL_FUZZ_TIMEOUT:-10}" \
  -rss_limit_mb=2048 -detect_leaks=1 -print_final_stats=1 \
  -max_len="${TIDAL_FUZZ_MAX_LEN:-131072}" \
  -artifact_prefix="$run/artifacts/" "$@" >"$log" 2>&1
status=$?
set -e

stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
count() { ls "$run/artifacts" | grep -c "^$1-" || true; }
executions="$(stat number_of_executed_units)"
rate="$(stat average_exec_per_sec)"
if [ -z "$executions" ]; then
  # -fork=N prints no final stats; its last "#N: ... time: Ts" line counts.
  last="$(grep -E '^#[0-9]+: ' "$log" | tail -1)"
  executions="$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")"
  time="$(sed -E 's/.* time: ([0-9]+)s.*/\1/' <<<"$last")"
  rate="$(( ${executions:-0} / (${time:-0} > 0 ? ${time:-1} : 1) ))"
fi
echo "== $target: ${executions:-0} executions, ${rate:-0} exec/s," \
  "corpus $(ls "$run/corpus" | wc -l) inputs, exit status $status"
echo "   artifacts: $(count crash) crashes, $(count timeout) timeouts," \
  "$(count leak) leaks, $(count oom) out-of-memory," \
  "$(( $(ls "$run/artifacts" | wc -l) - before )) new this run"
grep -E "^(==[0-9]+==ERROR|SUMMARY|.*runtime error)" "$log" | head -5 || true
if [ "$(ls "$run/artifacts" | wc -l)" -gt 0 ]; then
  echo "   replay one: $build/bin/tidal-fuzz-$target $run/artifacts/NAME"
  echo "   keep it as a regression input (after fixing it):"
  echo "     cp $run/artifacts/NAME test/fuzz/regressions/$target/"
fi
exit "$status"
