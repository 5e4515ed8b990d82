#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "daemon/host/links.h"
#include "daemon/host/sysctl.h"
#include "test.h"

static void test_carrier_losses(void)
{
        CHECK(links_carrier_losses(true, 0) == 0);
        CHECK(links_carrier_losses(true, 1) == 1); /* up -> down */
        CHECK(links_carrier_losses(true, 2) == 1); /* up -> down -> up, merged by the kernel */
        CHECK(links_carrier_losses(true, 20) == 10);
        CHECK(links_carrier_losses(false, 1) == 0); /* down -> up */
        CHECK(links_carrier_losses(false, 2) == 1); /* down -> up -> down */
        CHECK(links_carrier_losses(false, 3) == 1);
}

static void test_sysctl_values_equal(void)
{
        CHECK(sysctl_values_equal("268435456", "268435456"));
        CHECK(sysctl_values_equal("4096\t87380\t6291456", "4096 87380 6291456"));
        CHECK(sysctl_values_equal("  1 ", "1"));
        CHECK(!sysctl_values_equal("1", "10"));
        CHECK(!sysctl_values_equal("4096 87380", "4096 87380 6291456"));
        CHECK(sysctl_values_equal("", ""));
}

static void test_sysctl_read_write(void)
{
        char root[] = "/tmp/sparkd-test-sysctl.XXXXXX", path[256], buf[64], cmd[300];
        FILE *f;

        if (!mkdtemp(root))
                return;
        snprintf(path, sizeof(path), "%s/net", root);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/net/core", root);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/net/core/rmem_max", root);
        f = fopen(path, "w");
        fputs("212992\n", f);
        fclose(f);

        CHECK(sysctl_read(root, "net.core.rmem_max", buf, sizeof(buf)) == 0);
        CHECK_STREQ(buf, "212992");
        CHECK(sysctl_write(root, "net.core.rmem_max", "268435456") == 0);
        CHECK(sysctl_read(root, "net.core.rmem_max", buf, sizeof(buf)) == 0);
        CHECK_STREQ(buf, "268435456");
        CHECK(sysctl_read(root, "net.core.absent", buf, sizeof(buf)) == -ENOENT);
        CHECK(sysctl_write(root, "net.core.absent", "1") == -ENOENT);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        CHECK(system(cmd) == 0);
}

int main(void)
{
        RUN(test_carrier_losses);
        RUN(test_sysctl_values_equal);
        RUN(test_sysctl_read_write);
        return test_result();
}
