#!/usr/bin/env python3
"""The names users read in several places, checked against their one source in the code.

  probe kinds     daemon/config/probe_kinds.c, the kinds[] table
  events          daemon/base/event.c, the event table
  admin methods   the api_method tables under daemon/ whose needs_admin is true
  exit statuses   the "Exit status:" part of `sparkc --help` (client/exit_status.c's table)

Each list must appear whole, in the source's order and comma-separated ("rtt, tcp, ...": no name
left out, none added), in `sparkc --help` and in every document that names them: sparkc(1),
sparkd(8), sparkd.conf(5), conf/sparkd.conf and the README. Every exit status line of --help must
appear in sparkc(1) and the README as --help words it. The bash completion must offer exactly the
kinds (and "all") after --kind, and exactly the events after `sparkc watch`.

usage: check-names.py SOURCE_ROOT SPARKC
"""
import os
import re
import subprocess
import sys
import tempfile

src, sparkc = sys.argv[1], os.path.abspath(sys.argv[2])
problems = []


def read(path):
    with open(os.path.join(src, path), encoding="utf-8") as f:
        return f.read()


def table(path, start, row):
    """The names that the rows of the C table beginning at `start` in path give, in order."""
    text = read(path)
    names = []
    for m in re.finditer(re.escape(start), text):
        body = text[m.end():text.index("\n};", m.end())]
        names += [r.group(1) for r in re.finditer(row, body)]
    if not names:
        sys.exit(f"FAIL: no names found in {path} after '{start}' (has the table changed shape?)")
    return names


def admin_methods():
    names = []
    for root, dirs, files in sorted(os.walk(os.path.join(src, "daemon"))):
        dirs.sort()
        for name in sorted(files):
            path = os.path.relpath(os.path.join(root, name), src)
            if name.endswith(".c") and "struct api_method " in read(path):
                text = read(path)
                for m in re.finditer(r"static const struct api_method \w+\[\] = \{", text):
                    body = text[m.end():text.index("\n};", m.end())]
                    names += [r.group(1) for r in
                              re.finditer(r'\{\s*"([a-z-]+)",\s*\w+,\s*true\b', body)]
    if not names:
        sys.exit("FAIL: no method with needs_admin found under daemon/ (have the tables changed shape?)")
    return names


def flat(text):
    """The words as a reader sees them: no scdoc or Markdown emphasis, no comment marks, one space."""
    text = re.sub(r"^[ \t]*#+[ \t]?", "", text, flags=re.M)
    text = text.replace("*", "").replace("`", "")
    return " ".join(text.split())


def has_list(text, names):
    """Whether text has exactly this list: not one name more before or after it."""
    listed = re.escape(", ".join(names))
    return re.search(r"(?<![\w-])(?<![\w-], )" + listed + r"(?![\w-])(?!, [\w-])", text) is not None


def near_lists(text, names):
    """Lists in text of all these names but one (or all but in another order): a list that drifted.
    Shorter ones are allowed (e.g. the bandwidth kinds of [probe] kinds)."""
    name = "(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + ")"
    found = []
    for m in re.finditer(r"(?<![\w-])" + name + r"(?:, " + name + r")+(?![\w-])", text):
        listed = m.group(0).split(", ")
        if len(set(listed)) >= max(2, len(names) - 1) and listed != names:
            found.append(m.group(0))
    return found


help_text = subprocess.run([sparkc, "--help"], capture_output=True, text=True, check=True).stdout
exit_lines = []
for line in help_text.split("Exit status:\n", 1)[-1].splitlines() if "Exit status:\n" in help_text else []:
    if not line.strip():
        break
    exit_lines.append(" ".join(line.split()))
if len(exit_lines) < 3:
    sys.exit("FAIL: `sparkc --help` has no \"Exit status:\" part with at least 3 lines")

# Every status the client can return (client/exit_status.h) has its meaning in --help: "N  what"
# for every command, "COMMAND: N what, ..." for a command's own.
statuses = re.findall(r"\b(?:(DOCTOR|PROBE)_)?EXIT_[A-Z_]+ = (\d+)", read("client/exit_status.h"))
if len(statuses) < 3:
    sys.exit("FAIL: no exit statuses found in client/exit_status.h (has it changed shape?)")
for command, status in statuses:
    command = command.lower()
    line = next((l for l in exit_lines if l.startswith(command + ": ")), "") if command else ""
    said = re.search(rf"(: |, ){status} \w", line) if command else \
        any(l.startswith(status + " ") for l in exit_lines)
    if not said:
        problems.append(f"sparkc --help: exit status {status}{' of ' + command if command else ''} "
                        "(client/exit_status.h) has no meaning under \"Exit status:\"")

lists = {
    "probe kinds": (table("daemon/config/probe_kinds.c", "static const struct probe_kind kinds[] = {",
                          r'\.name\s*=\s*"([a-z_-]+)"'), "daemon/config/probe_kinds.c"),
    "events": (table("daemon/base/event.c", "static const struct event_info event_table[_EVENT_TYPE_MAX] = {", r'\[EVENT_\w+\]\s*=\s*\{\s*"([a-z-]+)"'),
               "daemon/base/event.c"),
    "admin methods": (admin_methods(), "the api_method tables' needs_admin"),
}

# Which list each place must have; exit statuses where "exit" is marked.
places = {
    "sparkc --help": (flat(help_text), ["probe kinds", "events", "admin methods"]),
    "man/sparkc.1.scd": (flat(read("man/sparkc.1.scd")), ["probe kinds", "events", "admin methods", "exit"]),
    "man/sparkd.8.scd": (flat(read("man/sparkd.8.scd")), ["probe kinds"]),
    "man/sparkd.conf.5.scd": (flat(read("man/sparkd.conf.5.scd")), ["admin methods"]),
    "conf/sparkd.conf": (flat(read("conf/sparkd.conf")), ["admin methods"]),
    "README.md": (flat(read("README.md")), ["probe kinds", "events", "admin methods", "exit"]),
}

for place, (text, wanted) in places.items():
    for what in wanted:
        if what == "exit":
            for line in exit_lines:
                if line not in text:
                    problems.append(f"{place}: the exit status line \"{line}\" of `sparkc --help` is "
                                    "missing (it must appear as --help words it)")
                # A command's own statuses said another way too: "doctor: 0 ok, ... 3 unknown".
                command = re.match(r"([a-z-]+): 0 ", line)
                if command:
                    for other in re.finditer(re.escape(command.group(0)), text):
                        if not text.startswith(line, other.start()):
                            problems.append(f"{place}: \"{text[other.start():other.start() + len(line)]}"
                                            f"...\" differs from `sparkc --help`'s \"{line}\"")
            continue
        names, origin = lists[what]
        for drifted in near_lists(text, names):
            problems.append(f"{place}: \"{drifted}\" is not the list of the {what} \"{', '.join(names)}\" "
                            f"(from {origin})")
        if not has_list(text, names):
            problems.append(f"{place}: no list of the {what} \"{', '.join(names)}\" (from {origin}: "
                            "all of them, in that order, comma-separated, nothing added)")

# The completion, as bash runs it (skipped where bash-completion is not installed).
lib = next((f for f in ("/usr/share/bash-completion/bash_completion", "/etc/bash_completion")
            if os.path.isfile(f)), None)


def completes(line):
    with tempfile.TemporaryDirectory() as bindir:
        os.symlink(sparkc, os.path.join(bindir, "sparkc"))
        script = r'''
                source "$1"; source "$2"; line=$3
                read -r -a COMP_WORDS <<<"$line"
                [[ $line == *" " ]] && COMP_WORDS+=("")
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE=$line; COMP_POINT=${#line}
                _sparkc sparkc "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                printf "%s\n" "${COMPREPLY[@]}"'''
        env = dict(os.environ, PATH=bindir + ":" + os.environ.get("PATH", ""), SPARKD_SOCKET="/nonexistent")
        out = subprocess.run(["bash", "-c", script, "_", lib, os.path.join(src, "completion/sparkc.bash"), line],
                             capture_output=True, text=True, env=env).stdout
    return set(out.split())


if lib:
    for line, what, extra in (("sparkc probe --peer x --kind ", "probe kinds", {"all"}),
                              ("sparkc watch ", "events", {"--help"})):
        want = set(lists[what][0]) | extra
        got = completes(line)
        if got != want:
            problems.append(f"completion/sparkc.bash: '{line}<TAB>' offers {sorted(got)}; the {what} are "
                            f"{sorted(want)} (missing: {sorted(want - got)}, unknown: {sorted(got - want)})")
else:
    print("note: bash-completion is not installed (Debian: bash-completion); the completion is not checked")

for p in problems:
    print("FAIL:", p)
if problems:
    print(f"FAIL: {len(problems)} place(s) disagree with the code")
    sys.exit(1)
print("PASS: kinds, events, admin methods and exit statuses agree in --help, the man pages, the "
      "config file, the completion and the README")
