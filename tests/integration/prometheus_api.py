#!/usr/bin/env python3
"""Questions to a Prometheus HTTP API, each polled until it holds or its deadline passes.

  prometheus_api.py URL targets-up N DEADLINE_SEC      N targets up
  prometheus_api.py URL rules RULES_FILE DEADLINE_SEC  every alert of RULES_FILE loaded and healthy
  prometheus_api.py URL series EXPR DEADLINE_SEC       EXPR returns a series
  prometheus_api.py URL panels DASHBOARD DEADLINE_SEC  every panel query of a Grafana dashboard
                                                       returns a series
Exit 0 when it holds, 1 (saying what is missing) when the deadline passed.
"""
import json
import sys
import time
import urllib.parse
import urllib.request

import yaml


def get(url, path, **params):
    query = urllib.parse.urlencode(params)
    with urllib.request.urlopen(f"{url}{path}?{query}", timeout=5) as r:
        return json.load(r)["data"]


def query(url, expr):
    return get(url, "/api/v1/query", query=expr)["result"]


def panel_exprs(panels):
    for p in panels:
        yield from panel_exprs(p.get("panels", []))
        for t in p.get("targets", []):
            yield p["title"], t["expr"]


def until(deadline, missing):
    """Polls missing() (what is still missing, a list) until it is empty or the deadline passes."""
    end = time.monotonic() + deadline
    while True:
        try:
            left = missing()
        except OSError as e:
            left = [f"no answer from Prometheus: {e}"]
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.5)


def main():
    url, what, arg, deadline = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    if what == "targets-up":
        def missing():
            up = [t["labels"]["instance"] for t in get(url, "/api/v1/targets")["activeTargets"]
                  if t["health"] == "up"]
            return [] if len(up) >= int(arg) else [f"{len(up)} targets up ({up}), expected {arg}"]
    elif what == "rules":
        with open(arg) as f:
            alerts = {r["alert"] for g in yaml.safe_load(f)["groups"] for r in g["rules"] if "alert" in r}

        def missing():
            loaded = {r["name"]: r["health"] for g in get(url, "/api/v1/rules")["groups"]
                      for r in g["rules"] if r["type"] == "alerting"}
            return [f"{a}: {loaded.get(a, 'not loaded')}" for a in sorted(alerts) if loaded.get(a) != "ok"]
    elif what == "series":
        def missing():
            return [] if query(url, arg) else [f"{arg}: no series"]
    elif what == "panels":
        with open(arg) as f:
            exprs = list(panel_exprs(json.load(f)["panels"]))

        def missing():
            return [f"panel '{title}': {expr}: no series" for title, expr in exprs if not query(url, expr)]
    else:
        sys.exit(f"unknown question {what}")
    left = until(deadline, missing)
    for line in left:
        print(line)
    if what == "panels" and not left:
        for title, expr in exprs:
            print(f"panel '{title}': {expr}: {len(query(url, expr))} series")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
