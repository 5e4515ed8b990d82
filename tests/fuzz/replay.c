/* A main for fuzz targets outside libFuzzer: runs the target once per file named on the command
 * line, or per file in a directory named there, and fails on the first input it cannot read. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path)
{
        FILE *f = fopen(path, "rb");
        uint8_t *data = NULL;
        size_t size = 0, cap = 0, n;

        if (!f) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                return -1;
        }
        do {
                if (size == cap) {
                        uint8_t *bigger = realloc(data, cap ? cap * 2 : 4096);

                        if (!bigger) {
                                fprintf(stderr, "%s: out of memory\n", path);
                                free(data);
                                fclose(f);
                                return -1;
                        }
                        data = bigger;
                        cap = cap ? cap * 2 : 4096;
                }
                n = fread(data + size, 1, cap - size, f);
                size += n;
        } while (n > 0);
        if (ferror(f)) {
                fprintf(stderr, "%s: read error\n", path);
                free(data);
                fclose(f);
                return -1;
        }
        fclose(f);
        /* An exact-size copy, so ASan sees any read past the input's end. */
        {
                uint8_t *exact = malloc(size ? size : 1);

                if (!exact) {
                        free(data);
                        return -1;
                }
                memcpy(exact, data, size);
                free(data);
                LLVMFuzzerTestOneInput(exact, size);
                free(exact);
        }
        return 0;
}

static int name_compare(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, unsigned *count)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        char **names = NULL;
        size_t n = 0;
        int r = 0;

        if (!d) {
                fprintf(stderr, "%s: %s\n", dir, strerror(errno));
                return -1;
        }
        while ((e = readdir(d))) {
                char **more;

                if (e->d_name[0] == '.')
                        continue;
                more = realloc(names, (n + 1) * sizeof(*names));
                if (!more || !(more[n] = strdup(e->d_name))) {
                        names = more ? more : names;
                        r = -1;
                        break;
                }
                names = more;
                n++;
        }
        closedir(d);
        qsort(names, n, sizeof(*names), name_compare);
        for (size_t i = 0; i < n; i++) {
                char path[4096];

                snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
                if (r == 0 && replay_file(path) < 0)
                        r = -1;
                else if (r == 0)
                        (*count)++;
                free(names[i]);
        }
        free(names);
        return r;
}

int main(int argc, char **argv)
{
        unsigned count = 0;

        if (argc < 2) {
                fprintf(stderr, "usage: %s FILE|DIR...\nRuns the fuzz target once on each input.\n",
                        argv[0]);
                return 2;
        }
        for (int i = 1; i < argc; i++) {
                struct stat st;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        return 1;
                }
                if (S_ISDIR(st.st_mode) ? replay_dir(argv[i], &count) < 0 : replay_file(argv[i]) < 0)
                        return 1;
                if (!S_ISDIR(st.st_mode))
                        count++;
        }
        printf("%u inputs replayed\n", count);
        return 0;
}
