#!/usr/bin/env bash
# Installs what is missing, then builds sparkd twice and runs every test suite: once with
# warnings as errors, once more under AddressSanitizer and UndefinedBehaviorSanitizer. The fuzz
# suite (tests/fuzz/run.sh) builds the fuzz targets with clang in build-fuzz and runs each a while.
# Runs as root: the integration tests make network namespaces; started by another user, it runs
# itself again through sudo. The last line is the count, "N passed, N failed, N skipped".
set -uo pipefail
. "$(dirname "$0")/root.sh"
as_root "$0" "$@"
cd "$(dirname "$0")/.."
top=$(pwd)

scripts/deps.sh test || { echo "DEPENDENCIES FAILED"; echo "0 passed, 1 failed"; exit 1; }

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export LSAN_OPTIONS=exitcode=23

declare -a logs=()
run_build() {
        local dir=$1 suites=$2
        shift 2
        echo "=== $dir: configure and build"
        if ! { [ -f "$dir/build.ninja" ] || meson setup "$dir" --werror "$@" >/dev/null; } ||
                ! meson configure "$dir" --werror "$@" >/dev/null || ! ninja -C "$dir"; then
                echo "BUILD FAILED: $dir"
                echo "0 passed, 1 failed"
                exit 1
        fi
        echo "=== $dir: tests ($suites)"
        local args=()
        for s in $suites; do args+=(--suite "$s"); done
        meson test -C "$dir" --print-errorlogs "${args[@]}"
        logs+=("$top/$dir/meson-logs/testlog.json")
}

run_build build-ci "lint unit integration package fuzz rdma-vm platform" -Dbuildtype=debugoptimized
run_build build-asan "unit integration" -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

python3 - "${logs[@]}" <<'PY'
import json, sys
passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        failed += 1
        continue
    for line in lines:
        result = json.loads(line)["result"]
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
PY
