#include <errno.h>

#include "daemon/base/api_admission.h"
#include "test.h"

static const struct api_access access = { .max_clients = 100,
                                          .reserved_admin_clients = 10,
                                          .max_clients_per_uid = 5 };

/* The verdict for a client of uid 1000 with open connections, open_of_uid its own: "" or why not. */
static const char *verdict(const struct api_access *a, bool is_admin, unsigned open, unsigned open_of_uid)
{
        static char why[256];
        struct api_admission_load load = { .open = open, .open_of_uid = open_of_uid };

        why[0] = '\0';
        if (api_admission_check(a, 1000, is_admin, &load, why, sizeof(why)) < 0)
                CHECK(why[0] != '\0');
        else
                CHECK(why[0] == '\0');
        return why;
}

static void test_reader_limits(void)
{
        CHECK_STREQ(verdict(&access, false, 0, 0), "");
        CHECK_STREQ(verdict(&access, false, 50, 4), "");
        CHECK_STREQ(verdict(&access, false, 50, 5), "uid 1000 holds 5 connections (max_clients_per_uid 5)");
        CHECK_STREQ(verdict(&access, false, 90, 0),
                    "90 connections open; the last 10 of max_clients 100 are kept for root and the admin "
                    "group (reserved_admin_clients)");
        CHECK_STREQ(verdict(&access, false, 100, 0), "100 connections open (max_clients 100)");
}

static void test_admins_use_the_reserve(void)
{
        CHECK_STREQ(verdict(&access, true, 90, 50), "");
        CHECK_STREQ(verdict(&access, true, 99, 99), "");
        CHECK_STREQ(verdict(&access, true, 100, 0), "100 connections open (max_clients 100)");
}

static void test_reserve_is_at_most_half(void)
{
        struct api_access small = { .max_clients = 5,
                                    .reserved_admin_clients = 16,
                                    .max_clients_per_uid = 64 };

        CHECK(api_admission_reserved(&small) == 2);
        CHECK_STREQ(verdict(&small, false, 2, 2), "");
        CHECK_STREQ(verdict(&small, false, 3, 3),
                    "3 connections open; the last 2 of max_clients 5 are kept for root and the admin group "
                    "(reserved_admin_clients)");
        CHECK_STREQ(verdict(&small, true, 4, 4), "");
}

int main(void)
{
        RUN(test_reader_limits);
        RUN(test_admins_use_the_reserve);
        RUN(test_reserve_is_at_most_half);
        return test_result();
}
