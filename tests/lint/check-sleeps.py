#!/usr/bin/env python3
"""Integration tests wait on barriers, not on fixed sleeps.

A test that sleeps to let something happen passes on an idle machine and fails on a loaded one;
it must wait for the thing itself (an event, a status showing the change, a condition polled with
a deadline). A sleep is accepted only where it cannot be such a wait:
  - inside a polling loop, a loop that checks a condition: `while COND`/`until COND` (not
    `while :`), or one whose body has `break` or `return`;
  - with a comment saying why on its line or on the line above its command (the kernel merges
    carrier changes closer than 1 s; a window the daemon's timer needs; a stand-in process).
Shell (.sh, heredoc scripts in them included) and Python (.py, python heredocs) are read.

usage: check-sleeps.py DIR
"""
import ast
import io
import os
import re
import sys
import tokenize

MIN_REASON_WORDS = 2

# Shell words after which the next word is a command.
COMMAND_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "{", "}", "!", "do", "then", "else", "elif",
                      "if", "while", "until", "exec", "time"}
SHELL_TOKEN = re.compile(r"&&|\|\||[;|&(){}]|[^\s;|&(){}]+")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


def is_reason(comment):
    return len(re.findall(r"[A-Za-z]{2,}", comment)) >= MIN_REASON_WORDS


def split_comment(line):
    """(code, comment) of one shell line: a # starting a word, outside double quotes, begins a
    comment. Single quotes are not followed: their text is mostly code (sh -c, python -c)."""
    in_double = False
    prev = " "
    for i, c in enumerate(line):
        if c == "\\" and in_double:
            prev = ""
            continue
        if c == '"' and prev != "\\":
            in_double = not in_double
        elif c == "#" and not in_double and (prev.isspace() or prev in ";&|("):
            return line[:i], line[i + 1:]
        prev = c
    return line, ""


class Loop:
    def __init__(self, keyword, header):
        self.keyword = keyword
        self.header = header
        self.exits = False

    def checks_condition(self):
        if self.exits:
            return True
        return self.keyword in ("while", "until") and self.header not in ([], [":"], ["true"])


def shell_sleeps(lines, first_lineno):
    """Yields (lineno, innermost Loop or None) for each sleep command in a shell text, and notes the
    loops' exits. Heredoc bodies are skipped here (see shell_file)."""
    found = []
    stack = []
    pending = None  # a loop keyword seen, its `do` not yet
    continued = False
    for offset, line in enumerate(lines):
        code, _ = split_comment(line)
        code = code.replace("'", " ").replace('"', " ")
        words = SHELL_TOKEN.findall(code)
        at_command = not continued
        for w in words:
            if at_command and pending is None and w in ("for", "while", "until"):
                pending = Loop(w, [])
            elif at_command and w == "do" and pending is not None:
                stack.append(pending)
                pending = None
            elif at_command and w == "done" and stack:
                stack.pop()
            elif pending is not None and w not in (";", "do"):
                pending.header.append(w)
            if at_command and w in ("break", "return") and stack:
                stack[-1].exits = True
            if at_command and w == "sleep":
                found.append((first_lineno + offset, stack[-1] if stack else None))
            at_command = w in COMMAND_SEPARATORS
        continued = code.rstrip().endswith("\\")
    return found


def command_start(lines, index):
    """The index of the first line of the command that line `index` belongs to."""
    while index > 0 and split_comment(lines[index - 1])[0].rstrip().endswith("\\"):
        index -= 1
    return index


def shell_reason(lines, index):
    if is_reason(split_comment(lines[index])[1]):
        return True
    start = command_start(lines, index)
    if start == 0:
        return False
    code, comment = split_comment(lines[start - 1])
    return not code.strip() and is_reason(comment)


def python_problems(text, first_lineno):
    """Line numbers (in the file) of sleeps in Python text that are neither polling nor explained."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []  # not Python after all (a heredoc fed to something else)
    comments = {}
    code_lines = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                comments[tok.start[0]] = tok.string[1:]
            elif tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                  tokenize.ENDMARKER):
                code_lines.add(tok.start[0])
    except tokenize.TokenError:
        pass
    problems = []

    def exits(loop):
        for node in ast.walk(loop):
            if isinstance(node, (ast.Break, ast.Return)):
                return True
        return False

    def polling(loop):
        if loop is None:
            return False
        if isinstance(loop, ast.While) and not (isinstance(loop.test, ast.Constant) and loop.test.value):
            return True
        return exits(loop)

    def explained(lineno):
        if is_reason(comments.get(lineno, "")):
            return True
        return lineno - 1 not in code_lines and is_reason(comments.get(lineno - 1, ""))

    def visit(node, loop):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            loop = None
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if name == "sleep" and not polling(loop) and not explained(node.lineno):
                problems.append(first_lineno + node.lineno - 1)
        for child in ast.iter_child_nodes(node):
            visit(child, node if isinstance(node, (ast.For, ast.While)) else loop)

    visit(tree, None)
    return problems


def shell_file(lines, first_lineno):
    """Problems in a shell text: its own sleeps, then those of its heredoc bodies."""
    problems = []
    main = []  # the text without heredoc bodies (blank lines keep the numbering)
    bodies = []  # (first line index, lines, is_python)
    i = 0
    while i < len(lines):
        line = lines[i]
        main.append(line)
        code = split_comment(line)[0]
        m = HEREDOC.search(code.replace("<<<", "   "))
        i += 1
        if not m:
            continue
        delimiter, strip_tabs = m.group(2), "<<-" in code
        start = i
        while i < len(lines) and (lines[i].lstrip("\t") if strip_tabs else lines[i]).rstrip("\n") != delimiter:
            i += 1
        bodies.append((start, lines[start:i], "python" in code))
        main.extend([""] * (i - start))
    for lineno, loop in shell_sleeps(main, first_lineno):
        if loop is not None and loop.checks_condition():
            continue
        if shell_reason(main, lineno - first_lineno):
            continue
        problems.append(lineno)
    for start, body, is_python in bodies:
        if is_python:
            problems += python_problems("".join(body), first_lineno + start)
        else:
            problems += shell_file(body, first_lineno + start)
    return problems


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    directory = sys.argv[1]
    failures = []
    n_files = 0
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if name.endswith(".sh"):
            with open(path) as f:
                problems = shell_file(f.readlines(), 1)
        elif name.endswith(".py"):
            with open(path) as f:
                problems = python_problems(f.read(), 1)
        else:
            continue
        n_files += 1
        failures += ["%s:%d" % (path, n) for n in sorted(set(problems))]
    for failure in failures:
        print("%s: sleep neither in a loop that checks a condition nor with a comment saying why" % failure)
    if failures:
        print("FAIL: %d sleeps: wait for the change itself (lib.sh's wait_until, an event, a status "
              "showing it), or say on the sleep's line or the line above why only time will do" % len(failures))
        return 1
    print("PASS: every sleep in %d files polls a condition or says why" % n_files)
    return 0


if __name__ == "__main__":
    sys.exit(main())
