# Sourced by the scripts that need root (installing packages, the daemon's socket and state,
# network namespaces), so that they run as written both as root and as a user with sudo.

# as_root SCRIPT [ARGS...]: as root, returns; as another user, runs SCRIPT again through sudo (which
# asks for the password); where there is no sudo, says to run it as root and exits.
as_root() {
        [ "$(id -u)" = 0 ] && return 0
        if ! command -v sudo >/dev/null; then
                echo "$1 needs root, and this machine has no sudo: run it as root" >&2
                exit 1
        fi
        exec sudo -- bash "$@"
}
