#!/usr/bin/env python3
"""The architecture, checked: which folder may include which, and no circles between files.

Folders are layers, lowest first; a file includes only headers of its own folder and of folders
it is allowed to use. Between object files of one library, a symbol used by one and defined by
another is an edge; the graph must have no cycle, so each file can be read knowing only the
ones below it.

usage: check-layers.py SOURCE_ROOT [STATIC_LIBRARY | PROGRAM_OBJECT_DIR ...]
"""
import os
import re
import subprocess
import sys

# folder: the folders it may include from (besides itself)
DAEMON_LAYERS = ["daemon/base", "daemon/config", "daemon/host", "daemon/fabric", "daemon/peers",
                 "daemon/probe", "daemon/cluster", "daemon/export", "daemon"]
ALLOWED = {
    "common": [],
    "inventory": ["common"],
    "probes": ["common", "inventory"],
    "client": ["common"],
}
for i, layer in enumerate(DAEMON_LAYERS):
    ALLOWED[layer] = ["common", "inventory"] + DAEMON_LAYERS[:i]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    for folder in ALLOWED:
        path = os.path.join(root, folder)
        for name in sorted(os.listdir(path)):
            if name.endswith((".c", ".h")):
                yield folder, os.path.join(folder, name)


def check_includes(root):
    problems = []
    edges = {}
    for folder, rel in sources(root):
        text = open(os.path.join(root, rel), encoding="utf-8").read()
        for name in INCLUDE.findall(text):
            if name == "config.h":  # generated into the build root
                continue
            if "/" in name:
                target = os.path.dirname(name)
                if not os.path.exists(os.path.join(root, name)):
                    problems.append(f"{rel}: includes {name}, which does not exist")
                    continue
                if target == folder:
                    problems.append(f"{rel}: names its own folder in #include \"{name}\"; "
                                    f"write \"{os.path.basename(name)}\"")
            else:
                target = folder
                if not os.path.exists(os.path.join(root, folder, name)):
                    problems.append(f"{rel}: includes \"{name}\", not in {folder}/; name its folder")
                    continue
            if target == folder:
                continue
            edges.setdefault(folder, set()).add(target)
            if target not in ALLOWED[folder]:
                problems.append(f"{rel}: includes {name}, but {folder}/ may use only "
                                f"{', '.join(ALLOWED[folder]) or 'itself'} ({target}/ is not below it)")
    return problems, edges


def object_files(group):
    """A static library, or a program's folder of object files."""
    if os.path.isdir(group):
        return sorted(os.path.join(group, n) for n in os.listdir(group) if n.endswith(".o"))
    return [group]


def nm(args, path):
    out = subprocess.run(["nm", "-A"] + args + [path], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        where, symbol = line.split()[0], line.split()[-1]
        # "lib.a:member.o:ADDRESS" from a library, "file.o:ADDRESS" from an object
        obj = [part for part in where.split(":") if part.endswith(".o")][-1]
        yield os.path.basename(obj).replace(".c.o", ".c"), symbol


def object_graph(group):
    """Per object file of the group, the others whose global symbols it uses."""
    defined, needed = {}, {}
    for path in object_files(group):
        for obj, sym in nm(["--defined-only", "-g"], path):
            defined.setdefault(sym, set()).add(obj)
            needed.setdefault(obj, set())
        for obj, sym in nm(["--undefined-only"], path):
            needed.setdefault(obj, set()).add(sym)
    graph = {obj: set() for obj in needed}
    for obj, symbols in needed.items():
        for sym in symbols:
            graph[obj].update(o for o in defined.get(sym, ()) if o != obj)
    return graph


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = sys.argv[1]
    problems, edges = check_includes(root)
    folder_cycles = cycles(edges)
    for c in folder_cycles:
        problems.append("folders include each other: " + " <-> ".join(c))
    for group in sys.argv[2:]:
        for c in cycles(object_graph(group)):
            problems.append(f"{os.path.basename(group)}: files use each other: " + " <-> ".join(c))
    for p in problems:
        print("FAIL: " + p)
    if problems:
        return 1
    print(f"PASS: {len(ALLOWED)} folders, {sum(len(v) for v in edges.values())} folder edges, "
          f"all downward; {len(sys.argv) - 2} libraries and programs without circles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
