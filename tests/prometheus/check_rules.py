#!/usr/bin/env python3
"""The shipped alert rules: promtool accepts them, their promtool unit tests pass, and every alert
has a test case where it fires and one where it does not (so a rule that never fires, or always
does, cannot pass unnoticed).

usage: check_rules.py RULES_FILE TEST_FILE   exit 0 pass, 1 fail, 77 skip (no promtool or no
PyYAML: a package build has neither unless asked, and runs this test in its unit suite)
"""
import shutil
import subprocess
import sys


def main():
    rules_file, test_file = sys.argv[1], sys.argv[2]
    promtool = shutil.which("promtool")
    if not promtool:
        print("SKIP: needs promtool (Debian: prometheus)")
        return 77
    try:
        import yaml
    except ImportError:
        print("SKIP: needs PyYAML to read the rules (Debian: python3-yaml)")
        return 77
    failures = []
    for args in (["check", "rules", rules_file], ["test", "rules", test_file]):
        run = subprocess.run([promtool, *args], capture_output=True, text=True)
        print(run.stdout + run.stderr)
        if run.returncode != 0:
            failures.append(f"promtool {' '.join(args)} exited {run.returncode}")

    with open(rules_file) as f:
        alerts = [r["alert"] for g in yaml.safe_load(f)["groups"] for r in g["rules"] if "alert" in r]
    with open(test_file) as f:
        tests = yaml.safe_load(f)["tests"]
    fires, silent = set(), set()
    for t in tests:
        for case in t.get("alert_rule_test", []):
            name = case["alertname"]
            if name not in alerts:
                failures.append(f"{test_file}: test '{t['name']}' names {name}, which {rules_file} lacks")
            (fires if case.get("exp_alerts") else silent).add(name)
    for name in alerts:
        if name not in fires:
            failures.append(f"{test_file}: no case where {name} fires (expected at least one)")
        if name not in silent:
            failures.append(f"{test_file}: no case where {name} does not fire (expected at least one)")
    for f in failures:
        print(f"FAIL: {f}")
    if not failures:
        print(f"ok: {len(alerts)} alerts, each with a case that fires and one that does not")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
