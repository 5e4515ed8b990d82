#!/usr/bin/env bash
# Runs inside the trixie tree as root, for tests/platform/test_trixie.sh (see there), in
# /srv/work: sparkd/ (the source), build.sh and install.sh (the README's commands). Every
# check prints "ok: ..." or "FAIL: ..." and a failure stops it.
set -euo pipefail
w=/srv/work
step() { echo "--- $(date -u +%T) $*"; }
ok() { echo "ok:   $*"; }
fail() { echo "FAIL: $*"; exit 1; }
# The CPU time of everything run here, for the stage's budget (wall time depends on the load).
cpu_time() {
        times >/tmp/sparkd-times # in this shell: a pipe would ask a fresh subshell
        awk 'NR == 2 { print "cpu:  user " $1 ", system " $2 " (the builds and tests run here)" }' /tmp/sparkd-times
}
trap cpu_time EXIT
as_owner() { runuser -u owner -- env -C "$1" HOME=/home/owner PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        DEB_BUILD_OPTIONS=parallel=2 LANG=C.UTF-8 bash -euo pipefail "${@:2}"; }

. /etc/os-release
ok "$PRETTY_NAME, gcc $(gcc -dumpversion), json-c $(pkg-config --modversion json-c), meson $(meson --version)"
chown -R owner:owner "$w"

step "1. warnings as errors (the CI's options), then the unit suite"
as_owner "$w/sparkd" -c 'meson setup ../build-werror --werror -Dbuildtype=debugoptimized >../werror-setup.log' ||
        { tail -n 30 "$w/werror-setup.log"; fail "meson setup --werror"; }
as_owner "$w/sparkd" -c 'ninja -C ../build-werror -j2 >../werror-build.log' ||
        { grep -B2 -A8 -m5 'error' "$w/werror-build.log"; fail "the build with warnings as errors"; }
ok "built with --werror ($(grep -c 'Compiling' "$w/werror-build.log") files compiled)"
if as_owner "$w/sparkd" -c 'meson test -C ../build-werror --suite unit --num-processes 2 --print-errorlogs >../werror-unit.log 2>&1'; then
        ok "unit suite: $(grep -E '^(Ok|Fail|Skipped|Timeout):' "$w/werror-unit.log" | tr -s ' \n' ' ')"
else
        grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT)|^(Ok|Fail|Skipped|Timeout):' "$w/werror-unit.log" | awk '!seen[$0]++' | sed 's/^/    /'
        sed -n '/Summary of Failures/q;p' "$w/werror-unit.log" | grep -v '^ *[0-9]*/[0-9]* ' | tail -n 40 || true
        fail "the unit suite"
fi

step "2. the README's build block as owner: deps.sh build, dpkg-buildpackage -us -uc -b"
if ! as_owner "$w/sparkd" "$w/build.sh" >"$w/readme-build.log" 2>&1; then
        tail -n 40 "$w/readme-build.log"
        fail "the README's build block (last 40 lines above)"
fi
if grep -q '^installing:' "$w/readme-build.log"; then
        fail "deps.sh build installed what Build-Depends lack: $(grep '^installing:' "$w/readme-build.log")"
fi
ok "deps.sh build found everything among the Build-Depends"
ok "dpkg-buildpackage: unit suite: $(grep -E '^(Ok|Fail|Skipped):' "$w/readme-build.log" | tr -s ' \n' ' ')"
deb=$(ls "$w"/sparkd_*.deb)
ok "built $(basename "$deb")"

step "3. the README's install command as owner"
# The package's dependencies come from the mirror (once: apt's archives are cached); the mirror
# out of reach is a skip (77), any other failure a failure.
install_failed() {
        if grep -qE 'Failed to fetch|Could not resolve|Temporary failure resolving|Could not connect' "$w/install.log"; then
                echo "SKIP: the Debian mirror did not answer for the package's dependencies (above)"
                exit 77
        fi
        fail "$(cat "$w/install.sh")"
}
# apt asks before it installs what the package depends on; the owner answers yes.
echo 'APT::Get::Assume-Yes "true";' >/etc/apt/apt.conf.d/90sparkd-test-yes
if ! as_owner "$w" "$w/install.sh" >"$w/install.log" 2>&1; then
        # The tree's package lists are as old as the tree: where the mirror has moved on, they
        # name packages it no longer has. Refresh them once, then as the README says again.
        tail -n 30 "$w/install.log"
        grep -q '404' "$w/install.log" || install_failed
        apt-get update -qq || install_failed
        as_owner "$w" "$w/install.sh" >"$w/install.log" 2>&1 || { tail -n 30 "$w/install.log"; install_failed; }
fi
dpkg-query -W -f='${Status} ${Version}\n' sparkd | grep -q '^install ok installed' || fail "sparkd is not installed"
ok "installed: sparkd $(dpkg-query -W -f='${Version}' sparkd)"

step "4. Depends names the package of every library the programs link"
depends=$(dpkg-deb -f "$deb" Depends)
echo "    Depends: $depends"
dpkg-deb -x "$deb" "$w/root"
# needed_paths ELF: the files of the libraries ELF names itself (NEEDED), as the loader finds them.
needed_paths() {
        local soname
        for soname in $(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
                ldd "$1" | awk -v s="$soname" '$1 == s && $2 == "=>" { print $3 }' | xargs -r realpath
        done
}
declare -A lib_pkg=()
while read -r elf; do
        head -c 4 "$elf" | grep -q ELF || continue
        while read -r lib; do
                pkg=$(dpkg -S "$lib" 2>/dev/null | head -n 1 | cut -d: -f1) ||
                        fail "$elf links $lib, which no package owns"
                [ -n "$pkg" ] || fail "$elf links $lib, which no package owns"
                [[ " ${lib_pkg[$pkg]:-}" == *" $(basename "$lib") "* ]] || lib_pkg[$pkg]+="$(basename "$lib") "
        done < <(needed_paths "$elf")
done < <(find "$w/root/usr/sbin" "$w/root/usr/bin" "$w/root/usr/libexec" -type f)
t64=0
for pkg in $(printf '%s\n' "${!lib_pkg[@]}" | sort); do
        if grep -qE "(^|, )$pkg( |,|$)" <<<"$depends"; then
                ok "Depends names $pkg (${lib_pkg[$pkg]% })"
        else
                fail "the programs link ${lib_pkg[$pkg]% } of $pkg, which Depends does not name"
        fi
        [[ $pkg != *t64 ]] || t64=$((t64 + 1))
done
[ "$t64" -gt 0 ] || fail "no library package with trixie's t64 name among: ${!lib_pkg[*]}"
ok "$t64 of them under trixie's t64 names"

step "5. sparkd --check-config on the installed config"
out=$(sparkd --check-config 2>&1) || fail "sparkd --check-config: $out"
ok "sparkd --check-config: exit 0${out:+, said: $out}"
ok "$(sparkd --version)"
