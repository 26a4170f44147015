#!/usr/bin/env bash
# Sets up and builds, then runs every test: lit + FileCheck, GoogleTest
# through CTest, the Python tests, and the formatting check, with one summary.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
BUILD_DIR="${TIDAL_BUILD_DIR:-build}"
exec /usr/bin/python3 scripts/run_tests.py "$BUILD_DIR"
