#!/bin/bash
# `sparkc topology --format dot | dot -Tsvg` renders with Debian's graphviz, for every shape's
# golden map, and the example in docs/ is what sparkc draws today for the 3-node ring.
# Needs no root: the maps are read from files (--from).
set -euo pipefail
SPARKC=${SPARKC_BIN:?SPARKC_BIN must name the sparkc binary}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v dot >/dev/null || { echo "SKIP: needs dot (graphviz)"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for map in "$ROOT"/tests/fixtures/topology/expected/*.map.json; do
        name=$(basename "$map" .map.json)
        "$SPARKC" topology --from "$map" --format dot >"$TMP/$name.dot"
        dot -Tsvg "$TMP/$name.dot" >"$TMP/$name.svg" 2>"$TMP/$name.err" ||
                { echo "FAIL: dot refused $name: $(cat "$TMP/$name.err")" >&2; exit 1; }
        [ ! -s "$TMP/$name.err" ] || { echo "FAIL: dot warned on $name: $(cat "$TMP/$name.err")" >&2; exit 1; }
        grep -q '<svg' "$TMP/$name.svg" || { echo "FAIL: $name: no SVG" >&2; exit 1; }
        for node in $(jq -r '.nodes[].name' "$map"); do
                grep -q ">$node<" "$TMP/$name.svg" || { echo "FAIL: $name: $node not drawn" >&2; exit 1; }
        done
        echo "$name: $(wc -c <"$TMP/$name.svg") bytes of SVG"
done
cmp -s "$TMP/ring3.dot" "$ROOT/docs/topology-ring3.dot" ||
        { echo "FAIL: docs/topology-ring3.dot is not what sparkc draws for the ring3 map" >&2; exit 1; }
echo "PASS: test_topology_dot"
