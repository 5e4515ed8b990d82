#!/usr/bin/env python3
"""The README's commands that the package test runs, one file each, in the README's order.

A block is marked by the line `<!-- e2e: WHERE -->` right before its ```sh fence; WHERE is
`build` (the machine that builds the package), `spark1`, `spark2` or `both`. Each command (lines
ending in a backslash, a pipe or && continue it) becomes DIR/NNN.WHERE.sh, so the test runs
exactly what the README says, and a README without marked blocks fails rather than tests nothing.

With SHAPE, the blocks of the cluster walkthroughs instead, marked `<!-- e2e-cluster: SHAPE WHERE
-->` (tests/integration/test_readme_clusters.sh runs them on the cluster harness); WHERE is `all`
(every node) or one node's name, `sparkN`.

usage: readme_blocks.py README DIR [SHAPE]
"""
import os
import re
import sys

readme, out = sys.argv[1], sys.argv[2]
shape = sys.argv[3] if len(sys.argv) > 3 else None
places = ("build", "spark1", "spark2", "both")
mark = re.compile(r"<!-- e2e: (\S+) -->") if shape is None else re.compile(r"<!-- e2e-cluster: (\S+) (\S+) -->")
lines = open(readme, encoding="utf-8").read().splitlines()
os.makedirs(out, exist_ok=True)
n = 0
i = 0
while i < len(lines):
    m = mark.fullmatch(lines[i].strip())
    i += 1
    if not m:
        continue
    if shape is None:
        where = m.group(1)
        if where not in places:
            sys.exit(f"{readme}:{i}: e2e marks a block for '{where}', not one of {', '.join(places)}")
    else:
        if m.group(1) != shape:
            continue
        where = m.group(2)
        if where != "all" and not re.fullmatch(r"spark[1-9][0-9]*", where):
            sys.exit(f"{readme}:{i}: e2e-cluster marks a block for '{where}', not all or sparkN")
    if i >= len(lines) or lines[i].strip() != "```sh":
        sys.exit(f"{readme}:{i + 1}: the line after an e2e mark must open a ```sh block")
    i += 1
    command = []
    while i < len(lines) and lines[i].strip() != "```":
        line = lines[i]
        i += 1
        if not command and (not line.strip() or line.lstrip().startswith("#")):
            continue
        command.append(line)
        code = line.split(" #", 1)[0].rstrip()
        if code.endswith(("\\", "|", "&&")):
            continue
        n += 1
        with open(os.path.join(out, f"{n:03d}.{where}.sh"), "w", encoding="utf-8") as f:
            f.write("\n".join(command) + "\n")
        command = []
    if i >= len(lines):
        sys.exit(f"{readme}: an e2e block is not closed")
    if command:
        sys.exit(f"{readme}:{i}: an e2e block ends in a continued line")
if n == 0 and shape is None:
    sys.exit(f"{readme}: no block marked <!-- e2e: WHERE --> (WHERE: {', '.join(places)})")
if n == 0:
    sys.exit(f"{readme}: no block marked <!-- e2e-cluster: {shape} WHERE --> (WHERE: all or sparkN)")
print(n)
