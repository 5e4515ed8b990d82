#include "helper_dir.h"

#include <sys/stat.h>

#include "config.h"

const char *helper_dir_default(void)
{
        struct stat self, built;

        /* The same file, not the same name: a copy or an install elsewhere is not the build's. */
        if (stat("/proc/self/exe", &self) == 0 && stat(SPARKD_BUILD_SPARKD, &built) == 0 &&
            self.st_dev == built.st_dev && self.st_ino == built.st_ino)
                return SPARKD_BUILD_HELPER_DIR;
        return SPARKD_HELPER_DIR;
}
