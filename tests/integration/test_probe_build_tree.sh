#!/usr/bin/env bash
# A sparkd run from its build tree finds the probe helpers built beside it: two daemons of the
# build tree in two namespaces, with no helper_dir in their configs, list rtt, tcp and pathmtu as
# available and measure them between each other. A configured helper_dir still wins, and a copy of
# the binary (as an installed sparkd is) looks in the installed directory, never in the build tree.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}

# kind_field NAME KIND PYEXPR: PYEXPR over the probe-kinds entry `k` of KIND on NAME's daemon.
kind_field() {
        json_get "$(sparkc_of "$1" --json probe-kinds)" "[$3 for k in d[\"kinds\"] if k[\"name\"] == \"$2\"][0]"
}

two_nodes
assert_not_contains "$(cat "$TEST_TMP/a.conf" "$TEST_TMP/b.conf")" "helper_dir" "the configs"

step "probe-kinds: the build tree's helpers, available"
for n in a b; do
        for kind in rtt tcp pathmtu; do
                assert_eq "$(kind_field $n $kind 'k["helper"]')" "$helpers/sparkd-probe-$kind" "$n: $kind's helper"
                assert_eq "$(kind_field $n $kind 'k["installed"]')" True "$n: $kind available"
        done
done
listing=$(sparkc_of a probe-kinds)
for kind in rtt tcp pathmtu; do
        line=$(grep "^$kind " <<<"$listing") || fail "no $kind in the listing: $listing"
        assert_not_contains "$line" "not available here" "the listing of $kind"
done

step "probes of those kinds between the two nodes"
for probe in "rtt" "tcp --duration 1" "pathmtu"; do
        out=$(sparkc_of a --json probe --peer b --kind $probe 2>&1) || fail "$probe probe a -> b failed: $out"
        assert_eq "$(json_get "$out" 'd["status"]')" ok "$probe status a -> b"
done
out=$(sparkc_of b --json probe --peer a --kind rtt) || fail "rtt probe b -> a failed: $out"
assert_eq "$(json_get "$out" 'd["status"]')" ok "rtt status b -> a"

step "a configured helper_dir still wins"
mkdir "$TEST_TMP/empty"
peer_conf a fa 10.99.0.2 "[probe]" "helper_dir = $TEST_TMP/empty"
sparkc_of a reload >/dev/null || fail "reload of a"
assert_eq "$(kind_field a rtt 'k["helper"]')" "$TEST_TMP/empty/sparkd-probe-rtt" "rtt's helper"
assert_eq "$(kind_field a rtt 'k["installed"]')" False "rtt available"

step "a copy of the binary looks in the installed directory"
cp "$SPARKD" "$TEST_TMP/sparkd"
sparkd_stop b
SPARKD=$TEST_TMP/sparkd sparkd_start b "$b" -c "$TEST_TMP/b.conf"
helper=$(kind_field b rtt 'k["helper"]')
assert_contains "$helper" "/libexec/sparkd/sparkd-probe-rtt" "the copy's rtt helper"
assert_not_contains "$helper" "$helpers" "the copy's rtt helper"

pass
