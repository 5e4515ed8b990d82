#include "helper_dir.h"

#include <stdbool.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include "config.h"

/* Whether path is the very file the build tree's sparkd is. */
static bool is_build_sparkd(const char *path, const struct stat *built)
{
        struct stat st;

        return path && stat(path, &st) == 0 && st.st_dev == built->st_dev && st.st_ino == built->st_ino;
}

static const char *helper_dir_find(void)
{
        struct stat built;

        if (stat(SPARKD_BUILD_SPARKD, &built) < 0)
                return SPARKD_HELPER_DIR;
        /* The same file, not the same name: a copy or an install elsewhere is not the build's.
         * /proc/self/exe is the emulator under qemu-user (a cross-built sparkd tested on the
         * build machine); the program the kernel was asked to run is then AT_EXECFN, which the
         * emulator sets to the guest's path as the kernel does. */
        if (is_build_sparkd("/proc/self/exe", &built) ||
            is_build_sparkd((const char *)getauxval(AT_EXECFN), &built))
                return SPARKD_BUILD_HELPER_DIR;
        return SPARKD_HELPER_DIR;
}

const char *helper_dir_default(void)
{
        /* Decided once, at the first config load: AT_EXECFN may be relative to the directory the
         * daemon started in, which it leaves when it detaches, and the answer cannot change. */
        static const char *dir;

        if (!dir)
                dir = helper_dir_find();
        return dir;
}
