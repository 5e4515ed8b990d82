#include "api_socket.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/macro.h"

#define MAX_PEER_GROUPS 256
/* Clients that may wait for accept(); the kernel caps it at net.core.somaxconn. */
#define LISTEN_BACKLOG 4096

bool api_socket_peer_in_group(int fd, gid_t primary, gid_t wanted)
{
        gid_t groups[MAX_PEER_GROUPS];
        socklen_t len = sizeof(groups);

        if (primary == wanted)
                return true;
        /* The supplementary groups the client had when it connected, straight from the kernel. */
        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
                return false;
        for (size_t i = 0; i < len / sizeof(gid_t); i++)
                if (groups[i] == wanted)
                        return true;
        return false;
}

int api_socket_apply_access(const char *path, const struct api_access *access)
{
        if (chmod(path, access->socket_mode) < 0)
                return -errno;
        if (access->has_socket_gid && chown(path, (uid_t)-1, access->socket_gid) < 0)
                return -errno;
        return 0;
}

static int socket_is_live(const struct sockaddr_un *addr)
{
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return -errno;
        return connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0;
}

int api_socket_bind(const char *path, const struct api_access *access)
{
        struct sockaddr_un addr = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *dir = NULL;
        char *slash;
        mode_t old_umask;
        int r;

        if (strlen(path) >= sizeof(addr.sun_path))
                return -ENAMETOOLONG;
        strcpy(addr.sun_path, path);

        dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = '\0';
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return -errno;
        }

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        /* The socket is born with its final mode, so there is no moment it is more open. */
        old_umask = umask(0777 & ~access->socket_mode);
        r = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
        if (r < 0 && errno == EADDRINUSE) {
                struct stat st;

                /* Only a socket left by an earlier run is replaced: a file, a directory or a
                 * symlink given as the path by mistake is someone's data. */
                if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
                        umask(old_umask);
                        return -ENOTSOCK;
                }
                if (socket_is_live(&addr) > 0) {
                        umask(old_umask);
                        return -EADDRINUSE;
                }
                (void)unlink(path);
                r = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
        }
        umask(old_umask);
        if (r < 0)
                return -errno;
        r = api_socket_apply_access(path, access);
        if (r < 0) {
                (void)unlink(path);
                return r;
        }
        if (listen(fd, LISTEN_BACKLOG) < 0) {
                r = -errno;
                (void)unlink(path);
                return r;
        }
        return TAKE_FD(fd);
}

char *api_socket_bound_path(int fd, const char *fallback)
{
        struct sockaddr_un addr = { 0 };
        socklen_t len = sizeof(addr);

        if (getsockname(fd, (struct sockaddr *)&addr, &len) < 0 ||
            len <= offsetof(struct sockaddr_un, sun_path) || addr.sun_path[0] == '\0')
                return strdup(fallback);
        addr.sun_path[sizeof(addr.sun_path) - 1] = '\0';
        return strdup(addr.sun_path);
}
