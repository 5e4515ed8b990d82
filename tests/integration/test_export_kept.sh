#!/usr/bin/env bash
# sparkd keeps the launchers' files current ([export] directory) on the cluster harness: three
# Sparks on a switch (tor1).
# - every node's sparkd.yaml and svd.env are what sparkc export writes on that node, byte for
#   byte; sparkd.yaml is the same on every node (same hosts, order and head);
# - while the plan holds, a reload (which makes the files again at once) leaves them untouched:
#   same bytes, same mtime, same inode, no new "written" line in the log;
# - spark3 stopped: spark1 and spark2 rewrite both files without it, and the gate fails the old
#   ones (exit 2) naming spark3's address.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

dir_of() { echo "$TEST_TMP/$1.export"; }

# kept_current NODE...: each NODE's kept files are what sparkc export gives there now, and the
# sparkrun file is the same on all of them.
kept_current() {
        local n first=""
        for n in "$@"; do
                rm -rf "$TEST_TMP/want-$n"
                mkdir -p "$TEST_TMP/want-$n"
                sparkc_of "$n" export sparkrun --output "$TEST_TMP/want-$n" >/dev/null || return 1
                sparkc_of "$n" export svd --output "$TEST_TMP/want-$n/svd.env" >/dev/null || return 1
                cmp -s "$TEST_TMP/want-$n/sparkd.yaml" "$(dir_of "$n")/sparkd.yaml" || return 1
                cmp -s "$TEST_TMP/want-$n/svd.env" "$(dir_of "$n")/svd.env" || return 1
                [ -n "$first" ] || first=$n
                cmp -s "$(dir_of "$first")/sparkd.yaml" "$(dir_of "$n")/sparkd.yaml" || return 1
        done
}

# stamp NODE: the kept files' inode, mtime (ns) and checksum.
stamp() { (cd "$(dir_of "$1")" && stat -c '%n %i %.9Y' sparkd.yaml svd.env && sha256sum sparkd.yaml svd.env); }

reloads_of() { json_get "$(sparkc_of "$1" --json status 2>/dev/null)" 'd["reloads"]'; }
reloaded() { [ "$(reloads_of "$1")" -gt "$2" ]; }
written_lines() { grep -c "export: $(dir_of "$1")/.* written" "$(log_of "$1")" || true; }

# hosts_of NODE: the hosts of NODE's kept sparkrun file, comma-separated.
hosts_of() {
        python3 -c 'import sys, yaml; print(",".join(yaml.safe_load(open(sys.argv[1]))["hosts"]))' \
                "$(dir_of "$1")/sparkd.yaml"
}

for i in 1 2 3; do CL_EXTRA[spark$i]=$(printf '[export]\ndirectory = %s' "$(dir_of "spark$i")"); done

step "three Sparks on tor1: every node's kept files are what sparkc export writes there"
cluster_switch tor1
for i in 1 2 3; do
        cluster_node "spark$i"
        cluster_plug "spark$i" 0 tor1
done
cluster_start
cluster_wait 60 cluster_plans_agree 3 spark1 spark2 spark3 || fail "no plan of 3"
cluster_wait_map switch 60 spark1 spark2 spark3
cluster_wait 30 kept_current spark1 spark2 spark3 || {
        for n in spark1 spark2 spark3; do ls -la "$(dir_of "$n")" || true; grep 'export:' "$(log_of "$n")" || true; done
        fail "the kept files are not what sparkc export writes"
}
cat "$(dir_of spark1)/sparkd.yaml" "$(dir_of spark2)/svd.env"
assert_eq "$(hosts_of spark2)" 10.20.1.1,10.20.1.2,10.20.1.3 "the hosts, the head first"
for n in spark1 spark2 spark3; do
        sparkc_of "$n" env --check --for svd "$(dir_of "$n")/svd.env" || fail "the gate fails $n's kept .env"
        sparkc_of "$n" env --check --for sparkrun "$(dir_of "$n")/sparkd.yaml" || fail "the gate fails $n's kept file"
done

step "the plan holds: a reload makes the files again and leaves them untouched"
for n in spark1 spark2 spark3; do
        before=$(stamp "$n")
        lines=$(written_lines "$n")
        r=$(reloads_of "$n")
        kill -HUP "$(pid_of "$n")"
        cluster_wait 20 reloaded "$n" "$r" || fail "$n did not reload"
        assert_eq "$(stamp "$n")" "$before" "$n's kept files after a reload"
        assert_eq "$(written_lines "$n")" "$lines" "$n's written lines after a reload"
done
echo "$before"
cp "$(dir_of spark1)/sparkd.yaml" "$TEST_TMP/old.yaml"
cp "$(dir_of spark1)/svd.env" "$TEST_TMP/old.env"

step "spark3 stopped: spark1 and spark2 rewrite both files without it"
sparkd_stop spark3
t0=$(date +%s)
without3() { [ "$(hosts_of spark1)" = 10.20.1.1,10.20.1.2 ] && kept_current spark1 spark2; }
cluster_wait 30 without3 || fail "the kept files still name spark3: $(cat "$(dir_of spark1)/sparkd.yaml")"
echo "rewritten $(($(date +%s) - t0)) s after the stop"
cat "$(dir_of spark1)/sparkd.yaml" "$(dir_of spark1)/svd.env"
for kind in "sparkrun $TEST_TMP/old.yaml" "svd $TEST_TMP/old.env"; do
        set +e
        # shellcheck disable=SC2086
        out=$(sparkc_of spark1 env --check --for $kind)
        rc=$?
        set -e
        echo "$out"
        assert_eq "$rc" 2 "the gate's exit on the old ${kind%% *} file"
        assert_contains "$out" "has 10.20.1.3, which is no member of the plan" "the gate names spark3"
done
pass
