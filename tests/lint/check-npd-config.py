#!/usr/bin/env python3
"""node-problem-detector's custom plugin monitor must accept sparkd's plugin configuration.

The fields and rules checked are those of node-problem-detector's source
(pkg/custompluginmonitor/types: CustomPluginConfig, pluginGlobalConfig, CustomRule; pkg/types:
Condition, Type): plugin "custom"; Go durations; a rule's timeout not above the global one; a
permanent rule's condition among the default conditions; no field it does not know (Go's JSON
decoding would silently drop it). Each rule's command line is then run with the built sparkc
against a socket where no daemon listens: it must print one line of at most max_output_length
bytes and exit 2 (Unknown), so the arguments are ones sparkc takes.

usage: check-npd-config.py CONFIG SPARKC
"""
import json
import re
import subprocess
import sys

TOP = {"plugin", "pluginConfig", "source", "conditions", "rules", "metricsReporting"}
GLOBAL = {"invoke_interval", "timeout", "max_output_length", "concurrency",
          "enable_message_change_based_condition_update", "skip_initial_status"}
RULE = {"type", "condition", "reason", "path", "args", "timeout", "invoke_interval"}
CONDITION = {"type", "status", "transition", "reason", "message"}
GO_DURATION = re.compile(r"^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$")
UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
errors = []


def error(what):
    errors.append(what)


def duration(where, value):
    if not isinstance(value, str) or not GO_DURATION.match(value):
        error(f"{where}: {value!r} is not a Go duration (such as \"30s\")")
        return None
    return sum(float(n) * UNIT_SECONDS[u] for n, _, u in re.findall(r"(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)", value))


def unknown_fields(where, obj, known):
    for key in sorted(set(obj) - known):
        error(f"{where}: field {key!r} is not one node-problem-detector reads (it reads {sorted(known)})")


def main(path, sparkc):
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    unknown_fields(path, config, TOP)
    if config.get("plugin") != "custom":
        error(f"{path}: plugin is {config.get('plugin')!r}; node-problem-detector supports only \"custom\"")
    if not isinstance(config.get("source"), str) or not config["source"]:
        error(f"{path}: source must name the monitor")
    pc = config.get("pluginConfig", {})
    unknown_fields(f"{path}: pluginConfig", pc, GLOBAL)
    global_timeout = duration(f"{path}: pluginConfig.timeout", pc.get("timeout", "5s"))
    duration(f"{path}: pluginConfig.invoke_interval", pc.get("invoke_interval", "30s"))
    max_output = pc.get("max_output_length", 80)
    if not isinstance(max_output, int) or max_output < 1:
        error(f"{path}: pluginConfig.max_output_length {max_output!r} is not a positive integer")
    kinds = set()
    for i, c in enumerate(config.get("conditions", [])):
        unknown_fields(f"{path}: conditions[{i}]", c, CONDITION)
        for key in ("type", "reason", "message"):
            if not isinstance(c.get(key), str) or not c[key]:
                error(f"{path}: conditions[{i}].{key} must be a non-empty string")
        kinds.add(c.get("type"))
    rules = config.get("rules", [])
    if not rules:
        error(f"{path}: no rules")
    for i, r in enumerate(rules):
        where = f"{path}: rules[{i}]"
        unknown_fields(where, r, RULE)
        if r.get("type") not in ("temporary", "permanent"):
            error(f"{where}: type {r.get('type')!r} is neither \"temporary\" nor \"permanent\"")
        if r.get("type") == "permanent" and r.get("condition") not in kinds:
            error(f"{where}: permanent condition {r.get('condition')!r} has no default in conditions ({sorted(kinds)})")
        if not isinstance(r.get("reason"), str) or not r["reason"]:
            error(f"{where}: reason must be a non-empty string")
        if not isinstance(r.get("path"), str) or not r["path"].startswith("/"):
            error(f"{where}: path {r.get('path')!r} must be absolute")
        args = r.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            error(f"{where}: args must be a list of strings")
            continue
        if "timeout" in r:
            t = duration(f"{where}.timeout", r["timeout"])
            if t is not None and global_timeout is not None and t > global_timeout:
                error(f"{where}: timeout {r['timeout']} is above the global {pc.get('timeout', '5s')}")
        if r.get("path") == "/usr/bin/sparkc":
            run = subprocess.run([sparkc, "--socket", "/nonexistent/sparkd.sock"] + args,
                                 capture_output=True, text=True, timeout=30)
            lines = run.stdout.splitlines()
            if run.returncode != 2 or len(lines) != 1 or len(lines[0].encode()) > max_output:
                error(f"{where}: sparkc {' '.join(args)} without a daemon exited {run.returncode} with "
                      f"{run.stdout!r}; expected exit 2 (Unknown) and one line of at most {max_output} bytes")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
