#!/usr/bin/env bash
# The same software on every node: two daemons on one cable read their host facts from the
# fixture trees nccl-build-a and nccl-build-b (one NCCL version, 2.28.9, in two builds told apart
# by their ELF build ids; tests/fixtures/nccl-builds/make-trees.sh). Each publishes its
# "software" section through the cluster view; the doctor on both nodes fails the consistency
# check naming both libraries' paths and build ids. b reloaded onto a's tree: the builds are
# equal and the check passes on both.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

# root_of TREE: a copy of the fixture tree whose sys is the namespace's own (ip netns exec mounts
# one), so the daemons' fabric veths are what their host roots show.
root_of() {
        cp -a "$TESTS_DIR/../fixtures/hosts/$1" "$TEST_TMP/$1"
        rm -rf "$TEST_TMP/$1/sys"
        ln -s /sys "$TEST_TMP/$1/sys"
        echo "$TEST_TMP/$1"
}
root_a=$(root_of nccl-build-a)
root_b=$(root_of nccl-build-b)
cable_nodes
printf '[daemon]\nhost_root = %s\n' "$root_a" >>"$TEST_TMP/a.conf"
printf '[daemon]\nhost_root = %s\n' "$root_b" >>"$TEST_TMP/b.conf"
start_cable_nodes

step "different builds of NCCL 2.28.9: the consistency check fails on both, naming paths and ids"
for n in a b; do
        wait_until 20 doctor_says $n "[FAIL] consistency" || fail "$n's doctor: $(doctor_text $n)"
        out=$(doctor_text $n)
        assert_contains "$out" "the same NCCL version in different builds on 2 up nodes" "$n's doctor"
        assert_contains "$out" "libnccl /usr/lib/aarch64-linux-gnu/libnccl.so.2 build 2b1c3e7f5d9a4b6c8e0f1a2b3c4d5e6f7a8b9c0d: a" "$n's doctor"
        assert_contains "$out" "libnccl /usr/local/cuda/lib64/libnccl.so.2 build 9f8e7d6c5b4a39281706f5e4d3c2b1a098765432: b" "$n's doctor"
        assert_contains "$out" "fix: install one NCCL build on every node" "$n's doctor"
done
json=$(sparkc_of a --json doctor) || true
assert_eq "$(json_get "$json" '[c for c in d["checks"] if c["id"] == "consistency"][0]["status"]')" fail "a's consistency check"

step "b on a's tree (reloaded): equal builds pass on both"
sed -i "s|host_root = $root_b|host_root = $root_a|" "$TEST_TMP/b.conf"
sparkc_of b reload >/dev/null || fail "b's reload"
for n in a b; do
        wait_until 20 doctor_says $n "the same software on 2 up nodes" || fail "$n's doctor: $(doctor_text $n)"
done
assert_contains "$(doctor_text a)" "[ ok ] consistency" "a's doctor"
sparkd_stop a
sparkd_stop b
pass
