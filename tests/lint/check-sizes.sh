#!/usr/bin/env bash
# Fails when a source file of the daemon, the client, the helpers or their libraries grows past
# 600 lines: past that size a file holds more than one concept, and should be split by them.
# Prints the median size of the .c files, which is to stay small.
set -euo pipefail
cd "${1:?source root}"
limit=600
mapfile -t files < <(find common inventory daemon probes client -name '*.[ch]' | sort)
failed=0
for f in "${files[@]}"; do
        n=$(wc -l <"$f")
        if [ "$n" -gt "$limit" ]; then
                echo "FAIL: $f has $n lines, more than $limit: split it by concept"
                failed=1
        fi
done
median=$(for f in "${files[@]}"; do
        if [[ $f == *.c ]]; then wc -l <"$f"; fi
done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
[ "$failed" = 0 ] || exit 1
echo "PASS: ${#files[@]} files of at most $limit lines; median .c file $median lines"
