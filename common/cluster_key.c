#include "cluster_key.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_read.h"
#include "macro.h"

static void key_compute_id(struct cluster_key *key)
{
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int len = 0;

        EVP_Digest(key->bytes, sizeof(key->bytes), digest, &len, EVP_sha256(), NULL);
        for (size_t i = 0; i < 8; i++)
                snprintf(key->id + 2 * i, 3, "%02x", digest[i]);
}

static int hex_value(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* `sparkc keygen` run as root writes a key only root can read, and the daemon runs as its own
 * user: say which user needs it, the one thing that fixes it. */
static void describe_unreadable(const char *path, char *why, size_t why_size)
{
        char buf[1024], user[64];
        struct passwd pw, *found = NULL;

        if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &found) == 0 && found)
                snprintf(user, sizeof(user), "%s", found->pw_name);
        else
                snprintf(user, sizeof(user), "%u", (unsigned)geteuid());
        snprintf(why, why_size, "cannot open %s: %s; this daemon runs as user %s: chown %s %s (mode 600)",
                 path, strerror(EACCES), user, user, path);
}

int cluster_key_load(const char *path, struct cluster_key *key, char *why, size_t why_size)
{
        _cleanup_free_ char *text = NULL;
        char reason[512];
        struct stat st;
        size_t n;
        int r;

        if (why && why_size)
                why[0] = '\0';
        /* Never follow a symlink to the key, nor wait on a FIFO put in its place. */
        r = file_read_regular_stat(AT_FDCWD, path, O_NOFOLLOW, CLUSTER_KEY_FILE_MAX, &text, &n, &st, reason,
                                   sizeof(reason));
        if (r < 0) {
                if (why && r == -EACCES)
                        describe_unreadable(path, why, why_size);
                else if (why && r == -ENOENT)
                        snprintf(why, why_size,
                                 "%s: copy the cluster key of a node already in the cluster to %s "
                                 "(mode 600), or make the first one with `sparkc keygen %s`; then `sparkc "
                                 "reload`",
                                 reason, path, path);
                else if (why)
                        snprintf(why, why_size, "%s", reason);
                return r;
        }
        if (st.st_mode & 0007) {
                if (why)
                        snprintf(why, why_size, "%s may be read by anyone (mode %04o): chmod 600 %s", path,
                                 (unsigned)(st.st_mode & 07777), path);
                return -EPERM;
        }
        while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
                text[--n] = '\0';
        if (n != CLUSTER_KEY_BYTES * 2) {
                if (why)
                        snprintf(why, why_size, "%s is not a cluster key: expected %d hex digits", path,
                                 CLUSTER_KEY_BYTES * 2);
                return -EBADMSG;
        }
        for (size_t i = 0; i < CLUSTER_KEY_BYTES; i++) {
                int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);

                if (hi < 0 || lo < 0) {
                        if (why)
                                snprintf(why, why_size, "%s is not a cluster key: expected %d hex digits",
                                         path, CLUSTER_KEY_BYTES * 2);
                        return -EBADMSG;
                }
                key->bytes[i] = (uint8_t)(hi << 4 | lo);
        }
        key_compute_id(key);
        return 0;
}

int cluster_key_generate(const char *path, bool overwrite, struct cluster_key *key)
{
        char text[CLUSTER_KEY_BYTES * 2 + 2];
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        if (getrandom(key->bytes, sizeof(key->bytes), 0) != (ssize_t)sizeof(key->bytes))
                return -EIO;
        for (size_t i = 0; i < CLUSTER_KEY_BYTES; i++)
                snprintf(text + 2 * i, 3, "%02x", key->bytes[i]);
        text[CLUSTER_KEY_BYTES * 2] = '\n';
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (overwrite ? O_TRUNC : O_EXCL), 0600);
        if (fd < 0)
                return -errno;
        /* An existing file keeps its mode on O_TRUNC; a key must never stay readable by others. */
        if (fchmod(fd, 0600) < 0)
                return -errno;
        n = write(fd, text, CLUSTER_KEY_BYTES * 2 + 1);
        if (n != CLUSTER_KEY_BYTES * 2 + 1)
                return n < 0 ? -errno : -EIO;
        if (fsync(fd) < 0)
                return -errno;
        key_compute_id(key);
        return 0;
}
