#!/usr/bin/env bash
# Fails when a C source file differs from what the project's .clang-format makes of it.
set -euo pipefail
cd "${1:?source root}"
command -v clang-format >/dev/null || { echo "SKIP: clang-format not installed"; exit 77; }
mapfile -t files < <(find common inventory daemon probes client tests -path tests/fixtures -prune -o -name '*.[ch]' -print | sort)
if ! clang-format --dry-run -Werror "${files[@]}"; then
        echo "FAIL: run clang-format -i on the files above"
        exit 1
fi
echo "PASS: ${#files[@]} files formatted"
