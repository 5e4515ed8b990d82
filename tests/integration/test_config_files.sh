#!/usr/bin/env bash
# Only regular files of bounded size are read as config: a FIFO, a device, a directory, a huge
# file, a NUL byte, and drop-ins of each wrong kind are refused at once with the path and why,
# by --check-config and by a running daemon's reload, which keeps its config and keeps answering.
. "$(dirname "$0")/lib.sh"

# check_refused FILE MESSAGE: --check-config -c FILE exits 1 within 10 s, saying MESSAGE, and
# never holds much memory. The address-space cap keeps a reader that would read without bound
# from taking the machine's memory with it; a sanitizer build reserves terabytes of address space
# for its shadow memory and keeps more resident, so it runs uncapped, held to a looser peak that a
# 300 MB read would still pass.
address_cap_kb=1048576 peak_max_kb=65536
if ldd "$SPARKD" 2>/dev/null | grep -E 'lib(asan|ubsan)' >/dev/null; then
        address_cap_kb=unlimited peak_max_kb=204800
fi
check_refused() {
        local file=$1 message=$2 rc=0 err peak_kb
        err=$( (ulimit -v "$address_cap_kb"; /usr/bin/time -f 'peak_kb=%M' timeout 10 "$SPARKD" --check-config -c "$file") 2>&1) ||
                rc=$?
        assert_eq "$rc" 1 "exit status of --check-config -c $file (124: it blocked; output: $err)"
        assert_contains "$err" "$message" "message for $file"
        peak_kb=$(sed -n 's/^peak_kb=//p' <<<"$err")
        [ "${peak_kb:-0}" -lt "$peak_max_kb" ] || fail "--check-config -c $file peaked at $peak_kb KiB"
}

step "the main file: FIFO, /dev/zero, a directory, 300 MB of zeros, a NUL byte"
mkfifo "$TEST_TMP/fifo.conf"
check_refused "$TEST_TMP/fifo.conf" "$TEST_TMP/fifo.conf is a FIFO, not a regular file"
check_refused /dev/zero "/dev/zero is a character device, not a regular file"
mkdir "$TEST_TMP/dir.conf"
check_refused "$TEST_TMP/dir.conf" "$TEST_TMP/dir.conf is a directory, not a regular file"
truncate -s 300M "$TEST_TMP/zeros.conf"
check_refused "$TEST_TMP/zeros.conf" "$TEST_TMP/zeros.conf is 300.0 MiB; at most 1.0 MiB is read"
printf '[daemon]\nnode_name = ab\0cd\n' >"$TEST_TMP/nul.conf"
check_refused "$TEST_TMP/nul.conf" "$TEST_TMP/nul.conf:2: a NUL byte; the config is text"

step "[peers] static of 64 addresses on one line, one a line, and a line past the limit"
peers=$(for i in $(seq 192 255); do printf ' 255.255.255.%d' "$i"; done)
printf '[peers]\nstatic =%s\n' "$peers" >"$TEST_TMP/peers64.conf"
out=$(timeout 10 "$SPARKD" --check-config -c "$TEST_TMP/peers64.conf" 2>&1) ||
        fail "64 static peers on a line of $(sed -n 2p "$TEST_TMP/peers64.conf" | wc -c) bytes refused: $out"
assert_contains "$out" "$TEST_TMP/peers64.conf: ok" "64 static peers on one line"
{
        printf '[peers]\n'
        for i in $(seq 1 64); do printf 'static = 10.0.%d.1\n' "$i"; done
} >"$TEST_TMP/peers-lines.conf"
out=$(timeout 10 "$SPARKD" --check-config -c "$TEST_TMP/peers-lines.conf" 2>&1) ||
        fail "64 static peers one a line refused: $out"
assert_contains "$out" "$TEST_TMP/peers-lines.conf: ok" "64 static peers one a line"
printf '[peers]\nstatic = %s\n' "$(head -c 70000 /dev/zero | tr '\0' a)" >"$TEST_TMP/toolong.conf"
check_refused "$TEST_TMP/toolong.conf" \
        "$TEST_TMP/toolong.conf:2: a line of 70009 bytes; the limit is 65534 bytes, not counting the newline"

step "drop-ins of each wrong kind"
conf=$TEST_TMP/sparkd.conf
printf '[daemon]\nnode_name = alpha\n' >"$conf"
mkdir "$conf.d"
printf '[daemon]\nmode = audit\n' >"$TEST_TMP/audit.txt"
ln -s "$TEST_TMP/audit.txt" "$conf.d/10-link.conf"
out=$(timeout 10 "$SPARKD" --check-config -c "$conf")
assert_contains "$out" "$conf.d/10-link.conf: ok" "a symlink to a regular file is read"
ln -s "$TEST_TMP/gone.conf" "$conf.d/20-dangling.conf"
check_refused "$conf" "$conf.d/20-dangling.conf: a symlink to $TEST_TMP/gone.conf, which does not exist"
rm "$conf.d/20-dangling.conf"
ln -s 30-loop.conf "$conf.d/30-loop.conf"
check_refused "$conf" "$conf.d/30-loop.conf: a symlink to 30-loop.conf, which is a symlink loop"
rm "$conf.d/30-loop.conf"
mkdir "$conf.d/40-dir.conf"
check_refused "$conf" "$conf.d/40-dir.conf is a directory, not a regular file"
rmdir "$conf.d/40-dir.conf"
mkfifo "$conf.d/50-fifo.conf"
check_refused "$conf" "$conf.d/50-fifo.conf is a FIFO, not a regular file"
rm "$conf.d/50-fifo.conf"
ln -s /dev/zero "$conf.d/60-zero.conf"
check_refused "$conf" "$conf.d/60-zero.conf is a character device, not a regular file"
rm "$conf.d/60-zero.conf"

step "a running daemon whose drop-in becomes a FIFO refuses the reload at once"
printf '[daemon]\nnode_name = beta\n' >"$conf.d/70-node.conf"
ns=$(netns_new a)
sparkd_start a "$ns" -c "$conf"
assert_eq "$(json_get "$(sparkc_of a --json status)" 'd["node"]')" beta "node name from the drop-in"
rm "$conf.d/70-node.conf"
mkfifo "$conf.d/70-node.conf"
rc=0
start=$(date +%s%N)
err=$(timeout 10 "$SPARKC" --socket "$(sock_of a)" reload 2>&1) || rc=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
assert_eq "$rc" 1 "exit status of a reload with a FIFO drop-in (124: the daemon blocked)"
assert_contains "$err" "$conf.d/70-node.conf is a FIFO, not a regular file" "reload error"
[ "$elapsed_ms" -lt 1000 ] || fail "the refused reload took $elapsed_ms ms"
json=$(timeout 10 "$SPARKC" --socket "$(sock_of a)" --json status) || fail "status after the refused reload"
assert_eq "$(json_get "$json" 'd["node"]')" beta "the running config is kept"
assert_eq "$(json_get "$json" 'd["reloads"]')" 0 "reload count"

step "and so does one whose main file becomes a FIFO"
rm "$conf"
mkfifo "$conf"
rc=0
err=$(timeout 10 "$SPARKC" --socket "$(sock_of a)" reload 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of a reload with a FIFO config (124: the daemon blocked)"
assert_contains "$err" "$conf is a FIFO, not a regular file" "reload error"
timeout 10 "$SPARKC" --socket "$(sock_of a)" status >/dev/null || fail "status after the refused reload"
sparkd_stop a
pass
