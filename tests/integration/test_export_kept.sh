#!/usr/bin/env bash
# sparkd keeps the launchers' files current ([export] directory) on the cluster harness: three
# Sparks on a switch (tor1).
# - every node's sparkd.yaml and svd.env are what sparkc export writes on that node, byte for
#   byte; sparkd.yaml is the same on every node (same hosts, order and head); with the unit's
#   umask (0027) the directory is 0755 and the files 0644, readable to the launchers' users;
# - while the plan holds, a reload (which makes the files again at once) leaves them untouched:
#   same bytes, same mtime, same inode, no new "written" line in the log;
# - spark3 stopped: spark1 and spark2 rewrite both files without it, and the gate fails the old
#   ones (exit 2) naming spark3's address.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"
. "$TESTS_DIR/lib_export.sh"

export_config spark1 spark2 spark3
# As the packaged unit has it (UMask=0027): the files and their directory stay readable to all.
umask 0027

step "three Sparks on tor1: every node's kept files are what sparkc export writes there"
cluster_switch tor1
for i in 1 2 3; do
        cluster_node "spark$i"
        cluster_plug "spark$i" 0 tor1
done
cluster_start
cluster_wait 60 cluster_plans_agree 3 spark1 spark2 spark3 || fail "no plan of 3"
cluster_wait_map switch 60 spark1 spark2 spark3
export_wait_current 30 spark1 spark2 spark3
cat "$(export_dir spark1)/sparkd.yaml" "$(export_dir spark2)/svd.env"
assert_eq "$(export_hosts spark2)" 10.20.1.1,10.20.1.2,10.20.1.3 "the hosts, the head first"
assert_eq "$(stat -c %a "$(export_dir spark1)" "$(export_dir spark1)/sparkd.yaml" "$(export_dir spark1)/svd.env" | xargs)" \
        "755 644 644" "the modes of the directory and its files under umask 0027"
for n in spark1 spark2 spark3; do
        sparkc_of "$n" env --check --for svd "$(export_dir "$n")/svd.env" || fail "the gate fails $n's kept .env"
        sparkc_of "$n" env --check --for sparkrun "$(export_dir "$n")/sparkd.yaml" || fail "the gate fails $n's kept file"
done

step "the plan holds: a reload makes the files again and leaves them untouched"
export_untouched spark1 spark2 spark3
cp "$(export_dir spark1)/sparkd.yaml" "$TEST_TMP/old.yaml"
cp "$(export_dir spark1)/svd.env" "$TEST_TMP/old.env"

step "spark3 stopped: spark1 and spark2 rewrite both files without it"
sparkd_stop spark3
t0=$(date +%s)
without3() { [ "$(export_hosts spark1)" = 10.20.1.1,10.20.1.2 ] && export_current spark1 spark2; }
cluster_wait 30 without3 || fail "the kept files still name spark3: $(cat "$(export_dir spark1)/sparkd.yaml")"
echo "rewritten $(($(date +%s) - t0)) s after the stop"
cat "$(export_dir spark1)/sparkd.yaml" "$(export_dir spark1)/svd.env"
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
