#!/usr/bin/env bash
# Malformed JSON, a 1 MiB request, unknown methods, wrong params, clients that vanish mid-request,
# 200 concurrent clients and a full client table all leave the daemon serving. Params that do not
# fit what a method declares are refused with -32602, naming the member; every result carries
# api_version.
. "$(dirname "$0")/lib.sh"

ns=$(netns_new a)
sparkd_start a "$ns"
for scenario in malformed oversize disconnects concurrent subscribe params; do
        step "$scenario"
        python3 "$TESTS_DIR/api_client.py" "$(sock_of a)" "$scenario" || fail "scenario $scenario"
done
kill -0 "$(pid_of a)" || fail "daemon died"
sparkd_stop a

step "max_clients"
printf '[api]\nmax_clients = 5\n' >"$TEST_TMP/small.conf"
sparkd_start b "$ns" -c "$TEST_TMP/small.conf"
python3 "$TESTS_DIR/api_client.py" "$(sock_of b)" max_clients || fail "scenario max_clients"
grep -q "refusing a client: 5 connections open" "$(log_of b)" || fail "refusal not logged"
sparkd_stop b
pass
