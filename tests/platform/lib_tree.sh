# Sourced by the platform stages: a Debian tree made once with debootstrap and debian/control's
# Build-Depends, kept in the cache (SPARKD_PLATFORM_CACHE, default /var/cache/sparkd-tests) with
# a stamp, and the source tree copied into a work directory. Each run then uses the tree through a
# throw-away overlay (systemd-nspawn --volatile=overlay), so what a run installs or writes there
# never reaches the cache; the work directory is a bind mount of the host's.
#
# The caller sets src (the source root), tmp (its work directory, removed on exit) and defines
# skip and fail; lib_tree.sh gives step, ok, tree_prepare, tree_run and source_copy.

cache=${SPARKD_PLATFORM_CACHE:-/var/cache/sparkd-tests}

# What apt says when it cannot reach the mirror.
network_errors='Failed to fetch|Could not resolve|Temporary failure resolving|Could not connect|Connection timed out|Network is unreachable'

step() { echo "--- $(date -u +%T) $*"; }
ok() { echo "ok:   $*"; }

[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, systemd-nspawn)"
for tool in systemd-nspawn flock git; do
        command -v "$tool" >/dev/null || skip "$tool not found (Debian: systemd-container, util-linux, git)"
done

# build_depends: debian/control's Build-Depends field, what the trees are made from.
build_depends() {
        awk '/^Build-Depends/ { on = 1; print; next } on && /^[ \t]/ { print; next } { on = 0 }' "$src/debian/control"
}

# tree_prepare NAME SUITE INCLUDE SETUP [VAR=VALUE...]: sets tree to the cached tree NAME (debootstrap
# --variant=minbase --include=INCLUDE SUITE, then the script SETUP run inside it as root with
# the source's debian/ at /srv/control/debian and the VARs in its environment), made when missing or when the stamp differs
# (suite, packages, VARs, SETUP's text, Build-Depends), under an exclusive lock; returns holding a
# shared one (fd 8) so that no other run remakes it while this one uses it.
tree_prepare() {
        local name=$1 suite=$2 include=$3 setup=$4 want mirror var
        shift 4
        local setenv=()
        for var in "$@"; do setenv+=("--setenv=$var"); done
        tree=$cache/$name
        local stamp=$tree.stamp
        mkdir -p "$cache"
        exec 8>"$tree.lock"
        flock -x 8
        want="debootstrap --variant=minbase --include=$include $suite; $*; setup $(sha256sum <"$setup" | cut -c1-16); build-depends $(build_depends | sha256sum | cut -c1-16)"
        if [ ! -d "$tree" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
                command -v debootstrap >/dev/null ||
                        skip "no cached tree in $tree and no debootstrap to make one (Debian: debootstrap)"
                step "making $tree (needs the Debian mirror): $want"
                rm -rf "$tree" "$tree.new" "$stamp"
                mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
                # shellcheck disable=SC2086
                if ! nice debootstrap --variant=minbase --include="$include" "$suite" "$tree.new" $mirror \
                        >"$tmp/debootstrap.log" 2>&1; then
                        tail -n 20 "$tmp/debootstrap.log"
                        rm -rf "$tree.new"
                        skip "debootstrap of $suite failed (no access to the Debian mirror?), last lines above"
                fi
                rm -f "$tree.new/etc/hostname"
                mkdir -p "$tmp/control"
                cp -r "$src/debian" "$tmp/control/"
                if ! systemd-nspawn -q -D "$tree.new" --register=no --keep-unit --bind-ro="$tmp/control:/srv/control" \
                        --bind-ro="$setup:/srv/setup.sh" "${setenv[@]}" env DEBIAN_FRONTEND=noninteractive nice bash /srv/setup.sh \
                        >"$tmp/setup.log" 2>&1; then
                        tail -n 30 "$tmp/setup.log"
                        rm -rf "$tree.new"
                        # The mirror out of reach is no fault of the tree; a Build-Depends that
                        # this Debian cannot satisfy is.
                        if grep -qE "$network_errors" "$tmp/setup.log"; then
                                skip "the Debian mirror did not answer while preparing $suite's tree (above)"
                        fi
                        fail "could not prepare $suite's tree (last lines of $(basename "$setup") above)"
                fi
                mv "$tree.new" "$tree"
                echo "$want" >"$stamp"
        fi
        flock -s 8
        ok "tree $tree ($(du -sh "$tree" | cut -f1))"
}

# tree_run ARGS...: runs a command in the cached tree through a throw-away overlay, with the
# host's network (apt reaches the mirror through it, where a stage lets apt download) and
# $tmp/work at /srv/work.
tree_run() {
        systemd-nspawn -q -D "$tree" --volatile=overlay --register=no --keep-unit \
                --bind="$tmp/work:/srv/work" --setenv=DEBIAN_FRONTEND=noninteractive "$@"
}

# source_copy DEST: the files of the source tree that git knows (tracked, or new and not
# ignored), so no build directory of the developer's goes in.
source_copy() {
        local dest=$1
        mkdir -p "$dest"
        (cd "$src" && git -c safe.directory='*' ls-files -z --cached --others --exclude-standard |
                tar --null --no-recursion --ignore-failed-read -cf - -T -) |
                tar -C "$dest" -xf - || fail "could not copy the source tree to $dest"
        [ -f "$dest/debian/control" ] || fail "$src: git lists no debian/control (not a checkout?)"
}

# tree_report NAME RC: what the run inside the tree (its log: $tmp/inside.log) showed, its times
# (t_start, t_tree, then now), and its verdict: a skip inside is a skip, any other failure fails
# the stage naming the tree, with the log's end.
tree_report() {
        local name=$1 rc=$2 t_end
        t_end=$(date +%s)
        echo "time: tree $((t_tree - t_start)) s, in the tree $((t_end - t_tree)) s, all $((t_end - t_start)) s"
        grep -E '^(ok|FAIL|SKIP|cpu|---|    )' "$tmp/inside.log" || true
        [ "$rc" != 77 ] || skip "$(sed -n 's/^SKIP: //p' "$tmp/inside.log" | tail -n 1)"
        if [ "$rc" != 0 ]; then
                echo "--- the last 60 lines of the log:"
                tail -n 60 "$tmp/inside.log"
                fail "in the $name tree (status $rc; see above)"
        fi
}
