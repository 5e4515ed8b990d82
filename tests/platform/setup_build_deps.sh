# Run inside a freshly debootstrapped tree, as root, when tests/platform/lib_tree.sh makes it:
# installs exactly debian/control's Build-Depends (apt-get build-dep; build-essential with them),
# for the architecture in HOST_ARCH (another than the tree's: a cross build, with
# crossbuild-essential for it), and, where the tree has sudo, adds the user "owner", who has sudo without a password as
# DGX OS's first user has sudo (nothing types a password here). apt's package lists stay, so a
# stage can install the built package and what it depends on.
set -euo pipefail
host_arch=${HOST_ARCH:-$(dpkg --print-architecture)}
build_dep=(apt-get build-dep -y -q --no-install-recommends)
if [ "$host_arch" != "$(dpkg --print-architecture)" ]; then
        dpkg --add-architecture "$host_arch"
        apt-get update -q
        apt-get install -y -q --no-install-recommends "crossbuild-essential-$host_arch"
        build_dep+=("-a$host_arch")
else
        apt-get update -q
fi
"${build_dep[@]}" /srv/control
apt-get clean
if command -v sudo >/dev/null; then
        useradd -m -s /bin/bash owner
        echo "owner ALL=(ALL) NOPASSWD: ALL" >/etc/sudoers.d/owner
        chmod 440 /etc/sudoers.d/owner
fi
