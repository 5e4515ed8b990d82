#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_read.h"
#include "common/macro.h"
#include "test.h"

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        return remove(path);
}

static char dir[] = "/tmp/sparkd-test-file-read.XXXXXX";

static char *in_dir(const char *name)
{
        static char path[256];

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        return path;
}

static int read_it(const char *name, int flags, size_t max, char **data, size_t *len, char *why, size_t n)
{
        return file_read_regular(AT_FDCWD, in_dir(name), flags, max, data, len, why, n);
}

static void write_file(const char *name, const char *text, size_t len)
{
        FILE *f = fopen(in_dir(name), "we");

        CHECK(f && fwrite(text, 1, len, f) == len);
        if (f)
                fclose(f);
}

static void test_regular(void)
{
        _cleanup_free_ char *data = NULL;
        char why[256];
        size_t len;

        write_file("ok", "a\0b", 3);
        CHECK(read_it("ok", 0, 3, &data, &len, why, sizeof(why)) == 0);
        CHECK(len == 3 && memcmp(data, "a\0b", 4) == 0);
        free(data);
        data = NULL;

        write_file("empty", "", 0);
        CHECK(read_it("empty", 0, 10, &data, &len, why, sizeof(why)) == 0 && len == 0 && data[0] == '\0');
}

static void test_refused(void)
{
        _cleanup_free_ char *expected = NULL;
        char why[256], *data = NULL;
        size_t len;

        /* A FIFO without a writer: refused at once, never waited on. */
        CHECK(mkfifo(in_dir("fifo"), 0600) == 0);
        CHECK(read_it("fifo", 0, 100, &data, &len, why, sizeof(why)) == -EINVAL && !data);
        CHECK(asprintf(&expected, "%s is a FIFO, not a regular file", in_dir("fifo")) > 0);
        CHECK_STREQ(why, expected);

        CHECK(mkdir(in_dir("subdir"), 0700) == 0);
        CHECK(read_it("subdir", 0, 100, &data, &len, why, sizeof(why)) == -EINVAL);
        CHECK(strstr(why, "is a directory, not a regular file") != NULL);

        CHECK(symlink("/dev/zero", in_dir("zero")) == 0);
        CHECK(read_it("zero", 0, 100, &data, &len, why, sizeof(why)) == -EINVAL);
        CHECK(strstr(why, "is a character device, not a regular file") != NULL);

        CHECK(symlink("nowhere", in_dir("dangling")) == 0);
        CHECK(read_it("dangling", 0, 100, &data, &len, why, sizeof(why)) == -ENOENT);
        CHECK(strstr(why, "No such file") != NULL);

        CHECK(symlink("loop", in_dir("loop")) == 0);
        CHECK(read_it("loop", 0, 100, &data, &len, why, sizeof(why)) == -ELOOP);

        write_file("target", "x", 1);
        CHECK(symlink("target", in_dir("link")) == 0);
        CHECK(read_it("link", O_NOFOLLOW, 100, &data, &len, why, sizeof(why)) == -ELOOP);
        CHECK(strstr(why, "is a symlink; it must be a regular file") != NULL);

        write_file("big", "0123456789", 10);
        CHECK(read_it("big", 0, 9, &data, &len, why, sizeof(why)) == -EFBIG && !data);
        CHECK(strstr(why, "big is 10 bytes; at most 9 bytes is read") != NULL);
}

static void test_sizes(void)
{
        char buf[32];

        file_size_format(17, buf, sizeof(buf));
        CHECK_STREQ(buf, "17 bytes");
        file_size_format(300ULL << 20, buf, sizeof(buf));
        CHECK_STREQ(buf, "300.0 MiB");
        file_size_format(1536, buf, sizeof(buf));
        CHECK_STREQ(buf, "1.5 KiB");
}

int main(void)
{
        if (!mkdtemp(dir))
                return 1;
        RUN(test_regular);
        RUN(test_refused);
        RUN(test_sizes);
        CHECK(nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS) == 0);
        return test_result();
}
