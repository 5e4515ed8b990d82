#!/usr/bin/env bash
# Builds the fuzz targets with clang and libFuzzer (ASan and UBSan on) in their own build dir and
# runs each for a while from its seed corpus; any crash, leak, sanitizer report or timeout fails.
# A finding is left under the build dir's fuzz-findings/TARGET/ (commit it as a regression input
# under tests/fuzz/regressions/TARGET/ with the fix).
#   FUZZ_SECONDS   seconds per target (default 20)
#   FUZZ_TARGETS   which targets (default: all)
#   FUZZ_JOBS      targets fuzzed at once (default: one per core)
#   FUZZ_BUILD_DIR the clang build dir (default: SOURCE/build-fuzz)
# Exit 77 (skipped) when clang or libFuzzer's runtime is missing.
set -uo pipefail
src=${SPARKD_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${FUZZ_BUILD_DIR:-$src/build-fuzz}
seconds=${FUZZ_SECONDS:-20}
targets=${FUZZ_TARGETS:-"jsonrpc api conf peer record probe_output sysfs inventory elf_note env_check topology summary history env_render netplan lldp"}

if ! command -v clang >/dev/null; then
        echo "SKIP: clang not installed (Debian: clang, libclang-rt-dev)"
        exit 77
fi
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
        clang -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null; then
        echo "SKIP: clang cannot link libFuzzer (Debian: libclang-rt-dev)"
        exit 77
fi

if [ ! -f "$build/build.ninja" ]; then
        log=$(mktemp)
        CC=clang meson setup "$build" "$src" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
                -Dbuildtype=debugoptimized -Dnccl=disabled -Drdma=disabled >"$log" 2>&1 ||
                { cat "$log"; rm -f "$log"; echo "FAIL: cannot configure $build"; exit 1; }
        rm -f "$log"
fi
ninja_targets=()
for t in $targets; do ninja_targets+=("tests/fuzz/fuzz-$t"); done
nice ninja -C "$build" "${ninja_targets[@]}" || { echo "FAIL: build"; exit 1; }

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# One target per core at a time: each fuzzes its own seconds, the run ends sooner.
jobs_max=${FUZZ_JOBS:-$(nproc)}
fuzz_one() {
        local t=$1 work findings rc dict=() words=$1
        work=$(mktemp -d)
        SPARKD_FUZZ_TMPDIR=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
        export SPARKD_FUZZ_TMPDIR
        findings=$build/fuzz-findings/$t
        mkdir -p "$findings"
        cp "$src/tests/fuzz/corpus/$t/"* "$work/"
        [ -d "$src/tests/fuzz/regressions/$t" ] && cp "$src/tests/fuzz/regressions/$t/"* "$work/"
        # The api target is written request lines: the jsonrpc target's words.
        [ "$t" = api ] && words=jsonrpc
        [ -f "$src/tests/fuzz/$words.dict" ] && dict=(-dict="$src/tests/fuzz/$words.dict")
        nice "$build/tests/fuzz/fuzz-$t" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
                -max_len=70000 -print_final_stats=1 -artifact_prefix="$findings/" \
                "$work" >"$build/fuzz-$t.log" 2>&1
        rc=$?
        rm -rf "$work" "$SPARKD_FUZZ_TMPDIR"
        return $rc
}
report() {
        local t=$1 rc=$2
        echo "=== fuzz-$t: ${seconds}s"
        grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$build/fuzz-$t.log"
        if [ "$rc" -ne 0 ]; then
                tail -60 "$build/fuzz-$t.log"
                echo "FAIL: fuzz-$t (exit $rc); input in $build/fuzz-findings/$t/"
                failed=1
        fi
}
failed=0
declare -A pid_of_target=()
for t in $targets; do
        fuzz_one "$t" &
        pid_of_target[$t]=$!
        while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
                wait -n
        done
done
for t in $targets; do
        rc=0
        wait "${pid_of_target[$t]}" || rc=$?
        report "$t" "$rc"
done
exit $failed
