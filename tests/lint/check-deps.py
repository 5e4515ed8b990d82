#!/usr/bin/env python3
"""scripts/deps.sh build against debian/control's Build-Depends: every Build-Depends has a package
in deps.sh's build list (so `deps.sh build` then `dpkg-buildpackage` works, as the README's step 2
says), and the list has nothing else beyond what dpkg-buildpackage itself needs (build-essential,
dpkg-dev, debhelper) and ninja-build (which meson runs). The platform suite checks the same on
Debian 13 by running it; this says which name is missing without a Debian tree.

usage: check-deps.py SOURCE_ROOT   exit 0 pass, 1 fail
"""
import re
import sys

root = sys.argv[1]
control = open(f"{root}/debian/control", encoding="utf-8").read()
m = re.search(r"^Build-Depends:(.*?)^(?=\S)", control, re.S | re.M)
if not m:
    sys.exit("FAIL: debian/control has no Build-Depends")
# debhelper provides the compat level and the dh sequences.
provided_by = {"debhelper-compat": "debhelper"}
build_depends = []
for entry in m.group(1).replace("\n", " ").split(","):
    alternatives = []
    for alt in entry.split("|"):
        name = re.sub(r"\(.*?\)|\[.*?\]|<.*?>", "", alt).strip()
        if name:
            alternatives.append("debhelper" if name.startswith("dh-sequence-") else provided_by.get(name, name))
    if alternatives:
        build_depends.append(alternatives)

deps = open(f"{root}/scripts/deps.sh", encoding="utf-8").read()
m = re.search(r"^build_packages=\((.*?)^\)", deps, re.S | re.M)
if not m:
    sys.exit("FAIL: scripts/deps.sh has no build_packages=( ... )")
listed = set()
for word in m.group(1).split():
    if word == '"$(systemd_pc_package)"':
        listed.update(("systemd-dev", "systemd"))  # the one this distribution has
    else:
        listed.add(word)

failures = []
for alternatives in build_depends:
    if not listed.intersection(alternatives):
        failures.append(f"Build-Depends names {' | '.join(alternatives)}; scripts/deps.sh build installs none of it")
known = {a for alts in build_depends for a in alts} | {"build-essential", "dpkg-dev", "debhelper", "ninja-build"}
for name in sorted(listed - known):
    failures.append(f"scripts/deps.sh build installs {name}, which neither Build-Depends nor dpkg-buildpackage needs")
for f in failures:
    print(f"FAIL: {f}")
if failures:
    sys.exit(1)
print(f"ok: the {len(build_depends)} Build-Depends and scripts/deps.sh build agree")
