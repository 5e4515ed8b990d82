#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/node_key.h"
#include "daemon/base/node_id.h"
#include "daemon/base/store.h"
#include "test.h"

static char dir[] = "/tmp/sparkd-test-store.XXXXXX";

static void test_write_read(void)
{
        struct store *s = NULL;
        char sub[512], *data = NULL;
        size_t len = 0;

        snprintf(sub, sizeof(sub), "%s/a/b/state", dir);
        CHECK(store_open(sub, &s) == 0);
        if (!s)
                return;
        CHECK(store_write(s, "x.json", "{\"a\":1}\n", 8) == 0);
        CHECK(store_read(s, "x.json", 1024, &data, &len) == 0);
        CHECK(len == 8 && data && strcmp(data, "{\"a\":1}\n") == 0);
        free(data);
        data = NULL;
        /* Overwrite replaces the whole content; no temporary file is left behind. */
        CHECK(store_write(s, "x.json", "{}", 2) == 0);
        CHECK(store_read(s, "x.json", 1024, &data, &len) == 0);
        CHECK(len == 2);
        free(data);
        data = NULL;
        {
                char tmp[600];

                snprintf(tmp, sizeof(tmp), "%s/.x.json.tmp", sub);
                CHECK(access(tmp, F_OK) < 0 && errno == ENOENT);
        }
        CHECK(store_read(s, "x.json", 1, &data, &len) == -EFBIG);
        CHECK(store_read(s, "absent", 1024, &data, &len) == -ENOENT);
        CHECK(store_write(s, "../escape", "x", 1) == -EINVAL);
        CHECK(store_quarantine(s, "x.json") == 0);
        CHECK(store_read(s, "x.json", 1024, &data, &len) == -ENOENT);
        CHECK(store_read(s, "x.json.corrupt", 1024, &data, &len) == 0);
        free(data);
        store_close(s);
}

/* A file outside the state directory (the metrics textfile) is written the same way, with the
 * mode asked for. */
static void test_write_path(void)
{
        char path[600], tmp[600], buf[16] = "";
        struct stat st;
        mode_t umask_was = umask(022);
        int fd;

        snprintf(path, sizeof(path), "%s/metrics.prom", dir);
        CHECK(store_write_path(path, "a 1\n", 4, 0644) == 0);
        CHECK(store_write_path(path, "b 2\n", 4, 0644) == 0);
        fd = open(path, O_RDONLY);
        CHECK(fd >= 0 && read(fd, buf, sizeof(buf) - 1) == 4);
        if (fd >= 0)
                close(fd);
        CHECK_STREQ(buf, "b 2\n");
        CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
        snprintf(tmp, sizeof(tmp), "%s/.metrics.prom.tmp", dir);
        CHECK(access(tmp, F_OK) < 0 && errno == ENOENT);
        snprintf(path, sizeof(path), "%s/absent/metrics.prom", dir);
        CHECK(store_write_path(path, "x", 1, 0644) == -ENOENT);
        umask(umask_was);
}

static void test_read_only_dir(void)
{
        struct store *s = NULL;
        char sub[512];

        if (geteuid() == 0) {
                /* root writes anyway; the integration tests cover a read-only mount. */
                printf("     (skipped as root)\n");
                return;
        }
        snprintf(sub, sizeof(sub), "%s/ro", dir);
        CHECK(store_open(sub, &s) == 0);
        chmod(sub, 0500);
        CHECK(store_write(s, "x", "y", 1) == -EACCES);
        store_close(s);
}

/* The store tells whether state is saved from how each file's last save went, not from the
 * directory being there: a directory in a file's place makes its every save fail. */
static void test_save_failure(void)
{
        struct store *s = NULL;
        const char *name = NULL;
        char sub[512], blocker[600];

        snprintf(sub, sizeof(sub), "%s/saves", dir);
        CHECK(store_open(sub, &s) == 0);
        if (!s)
                return;
        CHECK(store_save_failure(s, &name) == 0);
        CHECK(store_write(s, "a.json", "{}", 2) == 0);
        CHECK(store_save_failure(s, &name) == 0);
        snprintf(blocker, sizeof(blocker), "%s/b.json", sub);
        CHECK(mkdir(blocker, 0700) == 0);
        CHECK(store_write(s, "b.json", "{}", 2) == -EISDIR);
        CHECK(store_save_failure(s, &name) == -EISDIR);
        CHECK_STREQ(name, "b.json");
        CHECK(store_last_save(s, "b.json") == -EISDIR);
        CHECK(store_last_save(s, "a.json") == 0);
        /* Another file saved since does not hide that b.json is not. */
        CHECK(store_write(s, "a.json", "{}", 2) == 0);
        CHECK(store_save_failure(s, &name) == -EISDIR);
        CHECK(rmdir(blocker) == 0);
        CHECK(store_write(s, "b.json", "{}", 2) == 0);
        CHECK(store_save_failure(s, &name) == 0);
        store_close(s);
}

/* Writes small pieces and a large block, and leaves the stream's state to the save, as
 * history.json is written: the block goes past stdio's buffer straight to the file, so once it
 * fails nothing is left to flush, and work after it (json-c printing the baselines) overwrites
 * errno. */
static int write_pieces(FILE *f, void *userdata)
{
        static char block[65536];

        for (int i = 0; i < 100; i++)
                fprintf(f, "{\"piece\":%d},", i);
        fwrite(block, 1, sizeof(block), f);
        (void)access("/nonexistent-sparkd-test", F_OK);
        return 0;
}

/* A file limit (RLIMIT_FSIZE) fails the write under the stream with EFBIG, as a full disk does
 * with ENOSPC: the save says so, not EIO, and leaves nothing behind. */
static void test_save_failure_reason(void)
{
        struct store *s = NULL;
        struct rlimit old, small = { .rlim_cur = 4096, .rlim_max = RLIM_INFINITY };
        char sub[512], tmp[600];
        int r;

        snprintf(sub, sizeof(sub), "%s/limited", dir);
        CHECK(store_open(sub, &s) == 0);
        if (!s)
                return;
        CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
        small.rlim_max = old.rlim_max;
        signal(SIGXFSZ, SIG_IGN);
        CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
        r = store_write_with(s, "big.json", write_pieces, NULL);
        CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
        signal(SIGXFSZ, SIG_DFL);
        CHECK(r == -EFBIG);
        CHECK(store_last_save(s, "big.json") == -EFBIG);
        snprintf(tmp, sizeof(tmp), "%s/.big.json.tmp", sub);
        CHECK(access(tmp, F_OK) < 0 && errno == ENOENT);
        /* Within the limit the same writer saves. */
        CHECK(store_write_with(s, "big.json", write_pieces, NULL) == 0);
        store_close(s);
}

static void test_node_id(void)
{
        struct store *s = NULL;
        char sub[512], id[NODE_ID_LEN + 1], again[NODE_ID_LEN + 1], *data = NULL;
        size_t len;

        CHECK(node_id_check("0123456789abcdef0123456789abcdef\n", 33) == 0);
        CHECK(node_id_check("0123456789abcdef0123456789abcdef", 32) == 0);
        CHECK(node_id_check("0123456789ABCDEF0123456789abcdef", 32) == -EBADMSG);
        CHECK(node_id_check("0123", 4) == -EBADMSG);

        snprintf(sub, sizeof(sub), "%s/node", dir);
        CHECK(store_open(sub, &s) == 0);
        if (!s)
                return;
        EVP_PKEY *key = NULL, *key2 = NULL;
        char derived[NODE_ID_LEN + 1];
        struct stat st;

        CHECK(node_id_load(s, id, &key) == 0);
        CHECK(node_id_check(id, strlen(id)) == 0);
        /* The id is the one the key names, and the key file is the owner's alone. */
        CHECK(node_key_id(key, derived) == 0);
        CHECK_STREQ(derived, id);
        snprintf(sub, sizeof(sub), "%s/node/node-key", dir);
        CHECK(stat(sub, &st) == 0 && (st.st_mode & 0777) == 0600);
        CHECK(node_id_load(s, again, &key2) == 0);
        CHECK_STREQ(again, id);
        EVP_PKEY_free(key2);
        key2 = NULL;

        /* A random id from before ids came from keys is replaced by the key's. */
        CHECK(store_write(s, "node-id", "0123456789abcdef0123456789abcdef\n", 33) == 0);
        CHECK(node_id_load(s, again, &key2) == 0);
        CHECK_STREQ(again, id);
        CHECK(store_read(s, "node-id", 1024, &data, &len) == 0 && len == 33 && strncmp(data, id, 32) == 0);
        free(data);
        EVP_PKEY_free(key2);
        key2 = NULL;

        /* A damaged key is moved aside and a new key, and so a new id, made. */
        CHECK(store_write(s, "node-key", "garbage\0\xff", 9) == 0);
        CHECK(node_id_load(s, again, &key2) == 0);
        CHECK(strcmp(again, id) != 0);
        CHECK(store_read(s, "node-key.corrupt", 1024, &data, &len) == 0 && len == 9);
        free(data);
        EVP_PKEY_free(key2);
        EVP_PKEY_free(key);
        key = NULL;
        store_close(s);

        /* Without a state directory the id still exists, for this run. */
        CHECK(node_id_load(NULL, id, &key) == 0);
        CHECK(node_id_check(id, strlen(id)) == 0);
        EVP_PKEY_free(key);
}

int main(void)
{
        char cmd[600];

        if (!mkdtemp(dir)) {
                perror("mkdtemp");
                return 1;
        }
        RUN(test_write_read);
        RUN(test_write_path);
        RUN(test_read_only_dir);
        RUN(test_save_failure);
        RUN(test_save_failure_reason);
        RUN(test_node_id);
        snprintf(cmd, sizeof(cmd), "chmod -R u+w '%s'; rm -rf '%s'", dir, dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", dir);
        return test_result();
}
