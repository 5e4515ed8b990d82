#!/usr/bin/env bash
# Builds the Debian packages from a clean copy of the tree and checks what they
# ship (files, conffiles, maintainer scripts), runs lintian on them, checks the
# pkg.sparkd.nocuda profile, then lints the systemd units with systemd-analyze
# verify.
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
for tool in dpkg-deb systemd-analyze tar lintian make; do
        if ! command -v "$tool" >/dev/null; then
                echo "FAIL: $tool not found"
                exit 1
        fi
done
if [ ! -f "$src/debian/control" ]; then
        echo "FAIL: $src has no debian/control"
        exit 1
fi

cuda_dir=${CUDA_DIR:-/usr/local/cuda}
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
         usr/lib/sysusers.d/sparkd.conf usr/lib/tmpfiles.d/sparkd.conf \
         usr/share/man/man8/sparkd.8.gz usr/share/man/man1/sparkc.1.gz usr/share/man/man5/sparkd.conf.5.gz \
         usr/share/bash-completion/completions/sparkc \
         usr/share/sparkd/prometheus/sparkd.rules.yml usr/share/sparkd/grafana/sparkd-cluster.json \
         usr/share/sparkd/node-problem-detector/sparkd-monitor.json \
         usr/sbin/sparkd-slurm-health usr/share/man/man8/sparkd-slurm-health.8.gz; do
        if grep -qx "$f" "$tmp/contents"; then ok "$f"; else fail "$f missing from the package"; fi
done
# The NCCL helper links CUDA; it has a package of its own, so sparkd installs without CUDA.
if grep -q "sparkd-probe-nccl" "$tmp/contents"; then
        fail "sparkd ships sparkd-probe-nccl (it belongs in sparkd-probe-nccl)"
else
        ok "sparkd does not ship sparkd-probe-nccl"
fi

echo "== sparkd-probe-nccl (built where $cuda_dir has NCCL)"
nccl_debs=("$tmp"/sparkd-probe-nccl_*.deb)
if [ -f "$cuda_dir/include/nccl.h" ]; then
        if [ -f "${nccl_debs[0]}" ]; then
                nccl_deb=${nccl_debs[0]}
                ok "built $(basename "$nccl_deb")"
                if dpkg-deb -c "$nccl_deb" | awk '{ print $6 }' | grep -qx ./usr/libexec/sparkd/sparkd-probe-nccl; then
                        ok "it ships usr/libexec/sparkd/sparkd-probe-nccl"
                else
                        fail "sparkd-probe-nccl does not ship usr/libexec/sparkd/sparkd-probe-nccl"
                fi
                depends=$(dpkg-deb -f "$nccl_deb" Depends)
                version=$(dpkg-deb -f "$deb" Version)
                if grep -qF "sparkd (= $version)" <<<"$depends"; then
                        ok "it depends on sparkd (= $version)"
                else
                        fail "sparkd-probe-nccl Depends: $depends, not on sparkd (= $version)"
                fi
        else
                fail "$cuda_dir has NCCL but no sparkd-probe-nccl_*.deb was built"
        fi
elif [ -f "${nccl_debs[0]}" ]; then
        fail "no NCCL in $cuda_dir, yet $(basename "${nccl_debs[0]}") was built"
else
        ok "no NCCL in $cuda_dir: no sparkd-probe-nccl package, as it should be"
fi
# Both ways of leaving it out, without another build: the profile, and a CUDA_DIR without NCCL
# (debian/rules then sets the profile itself, for debhelper to see).
if (cd "$work" && DEB_BUILD_PROFILES=pkg.sparkd.nocuda dh_listpackages 2>/dev/null) | grep -qx sparkd-probe-nccl; then
        fail "the pkg.sparkd.nocuda profile does not leave sparkd-probe-nccl out"
else
        ok "the pkg.sparkd.nocuda profile leaves sparkd-probe-nccl out"
fi
profiles=$(cd "$work" && make -s -f debian/rules CUDA_DIR=/nonexistent \
        --eval 'print-profiles: ; @echo "$$DEB_BUILD_PROFILES"' print-profiles 2>&1)
if grep -qw pkg.sparkd.nocuda <<<"$profiles"; then
        ok "without CUDA, debian/rules sets pkg.sparkd.nocuda itself"
else
        fail "with CUDA_DIR=/nonexistent, debian/rules gives DEB_BUILD_PROFILES=\"$profiles\""
fi

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
check_script postinst "sparkc keygen /etc/sparkd/cluster.key" "makes a cluster key"
check_script postinst '! -e /etc/sparkd/cluster.key' "makes the key only where there is none"
check_script postinst 'chown sparkd:sparkd /etc/sparkd/cluster.key' "gives the key to the daemon's user"
if grep -q -- '--force' "$tmp/control/postinst"; then
        fail "postinst: may overwrite a cluster key (--force)"
else
        ok "postinst: never overwrites a cluster key"
fi
# The key's user must exist before the key is given to it.
if awk '/systemd-sysusers/ && !u { u = NR } /chown sparkd:sparkd/ && !c { c = NR }
        END { exit !(u && c && u < c) }' "$tmp/control/postinst"; then
        ok "postinst: the sparkd user is made before the key is chowned"
else
        fail "postinst: chowns the key before systemd-sysusers made the user"
fi
check_script postrm 'rm -rf /var/lib/sparkd' "purge removes /var/lib/sparkd"
check_script postrm 'rm -f /etc/sparkd/cluster.key' "purge removes the cluster key"

echo "== lintian (errors and warnings fail)"
if lintian --fail-on error,warning \
        "$tmp"/sparkd_*.changes >"$tmp/lintian.out" 2>&1; then
        ok "lintian: no errors or warnings"
        sed 's/^/    /' "$tmp/lintian.out"
else
        sed 's/^/    /' "$tmp/lintian.out"
        fail "lintian found errors or warnings, see above"
fi

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
echo "PASS: the sparkd packages build and ship what they should"
exit 0
