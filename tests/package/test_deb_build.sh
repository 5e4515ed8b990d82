#!/usr/bin/env bash
# Builds the Debian package from a clean copy of the tree and checks what it
# ships, then lints the systemd units with systemd-analyze verify.
#
# usage: test_deb_build.sh [SOURCE_ROOT]
# exit:  0 pass, 1 fail, 77 skip (no dpkg-buildpackage on this machine)
set -u

src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok()   { echo "ok:   $*"; }

if ! command -v dpkg-buildpackage >/dev/null; then
        echo "SKIP: dpkg-buildpackage not found (Debian: dpkg-dev, debhelper)"
        exit 77
fi
for tool in dpkg-deb systemd-analyze tar; do
        if ! command -v "$tool" >/dev/null; then
                echo "FAIL: $tool not found"
                exit 1
        fi
done
if [ ! -f "$src/debian/control" ]; then
        echo "FAIL: $src has no debian/control"
        exit 1
fi

tmp=$(mktemp -d /tmp/sparkd-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# dpkg-buildpackage writes the .deb next to the source directory, so the copy
# gets its own directory inside $tmp. Build trees of the developer stay out:
# a stale build/ or obj-*/ would otherwise be used or shipped.
work=$tmp/sparkd
mkdir "$work"
if ! tar -C "$src" --exclude=./.git --exclude='./build*' --exclude='./obj-*' -cf - . |
     tar -C "$work" -xf -; then
        echo "FAIL: could not copy $src to $work"
        exit 1
fi

echo "== dpkg-buildpackage -us -uc -b (log: build.log, shown on failure)"
if ! (cd "$work" && dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1; then
        tail -n 60 "$tmp/build.log"
        echo "FAIL: dpkg-buildpackage failed (last 60 lines above)"
        exit 1
fi

debs=("$tmp"/sparkd_*.deb)
if [ ! -f "${debs[0]}" ]; then
        ls -l "$tmp"
        echo "FAIL: no sparkd_*.deb produced"
        exit 1
fi
deb=${debs[0]}
ok "built $(basename "$deb")"

echo "== contents"
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./||' >"$tmp/contents"
unitdir=
for d in lib/systemd/system usr/lib/systemd/system; do
        grep -qx "$d/sparkd.service" "$tmp/contents" && unitdir=$d
done
if [ -n "$unitdir" ]; then
        ok "$unitdir/sparkd.service"
else
        fail "no sparkd.service under lib/systemd/system or usr/lib/systemd/system"
fi
for f in usr/sbin/sparkd usr/bin/sparkc usr/libexec/sparkd/sparkd-probe-tcp usr/libexec/sparkd/sparkd-probe-rtt \
         usr/libexec/sparkd/sparkd-probe-pathmtu \
         usr/libexec/sparkd/sparkd-probe-rdma etc/sparkd/sparkd.conf \
         ${unitdir:+$unitdir/sparkd.socket} \
         usr/lib/sysusers.d/sparkd.conf usr/lib/tmpfiles.d/sparkd.conf; do
        if grep -qx "$f" "$tmp/contents"; then ok "$f"; else fail "$f missing from the package"; fi
done

echo "== maintainer scripts"
dpkg-deb -e "$deb" "$tmp/control"
check_script() {        # FILE PATTERN WHAT
        if grep -q -- "$2" "$tmp/control/$1" 2>/dev/null; then ok "$1: $3"; else fail "$1: $3"; fi
}
check_script conffiles '^/etc/sparkd/sparkd.conf$' "sparkd.conf is a conffile"
check_script postinst 'systemd-sysusers.*sparkd.conf' "creates the sparkd user and groups"
check_script postinst 'systemd-tmpfiles.*sparkd.conf' "creates the directories"
check_script postinst "deb-systemd-helper.*enable.*sparkd.service" "enables sparkd.service"
check_script postinst "deb-systemd-invoke.*sparkd.service" "starts sparkd.service"
check_script postinst "sparkd.socket" "handles sparkd.socket"
check_script postrm 'rm -rf /var/lib/sparkd' "purge removes /var/lib/sparkd"

echo "== systemd-analyze verify"
# verify fails on an ExecStart= binary that does not exist, and /usr/sbin/sparkd
# is not installed on a build machine. So verify in a root tree: the unpacked
# package, plus the host's units (sysinit.target, ...) and the host's copies
# of commands the package does not ship (/bin/kill). It then also checks that
# the package ships the binary its unit starts.
# verify exits 0 on unknown keys and bad values, so any stderr output fails.
if [ -n "$unitdir" ]; then
        root=$tmp/root
        dpkg-deb -x "$deb" "$root"
        for u in sparkd.service sparkd.socket; do
                if ! cmp -s "$src/systemd/$u" "$root/$unitdir/$u"; then
                        fail "$unitdir/$u in the package differs from systemd/$u"
                fi
        done
        cp -an "$(readlink -f /lib/systemd/system)/." "$root/$unitdir/"
        sed -n 's/^Exec[A-Za-z]*=[-@:+!]*//p' "$root/$unitdir/sparkd.service" |
                awk '{ print $1 }' | sort -u |
        while read -r cmd; do
                if [ ! -e "$root$cmd" ] && [ -x "$cmd" ]; then
                        mkdir -p "$root$(dirname "$cmd")"
                        cp -L "$cmd" "$root$cmd"
                fi
        done
        systemd-analyze verify --man=no --root="$root" sparkd.service sparkd.socket \
                >"$tmp/verify.out" 2>&1
        rc=$?
        if [ "$rc" -eq 0 ] && [ ! -s "$tmp/verify.out" ]; then
                ok "verify sparkd.service sparkd.socket: clean"
        else
                sed 's/^/    /' "$tmp/verify.out"
                fail "systemd-analyze verify (exit $rc) complained, see above"
        fi
fi

if [ "$failures" -ne 0 ]; then
        echo "FAIL: $failures check(s) failed"
        exit 1
fi
echo "PASS: sparkd package builds and ships what it should"
exit 0
