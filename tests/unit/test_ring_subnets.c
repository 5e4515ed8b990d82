/* The doctor's twin-subnets check on a 4-ring (tests/fixtures/topology/ring4.json, from spark1,
 * on the spark-twins host tree): two ports facing different nodes in one subnet, as link-local
 * 169.254.0.0/16 on every port gives, fail with the plan's addresses in the fix; one subnet per
 * cable passes; without a map nothing says where the ports lead, and nothing is flagged. */
#include <stdlib.h>
#include <string.h>

#include "daemon/fabric/doctor.h"
#include "inventory/fabric.h"
#include "test.h"
#include "topology_fixture.h"

#define SPARK1 "0000000000000000000000005a001111"

static const char *str(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : "(null)";
}

/* The twin-subnets check of spark1 with a0 on enp1s0f0np0 and a1 on enp1s0f1np1. */
static json_object *twin_subnets(const char *a0, const char *a1, bool has_map)
{
        struct fabric_facts f;
        char root[512];
        json_object *doctor, *checks, *found = NULL;

        snprintf(root, sizeof(root), "%s/spark-twins", FIXTURES_DIR);
        CHECK(fabric_facts_read(root, NULL, false, &f) == 0);
        CHECK(fabric_facts_add_address(&f, "enp1s0f0np0", a0) == 0);
        CHECK(fabric_facts_add_address(&f, "enp1s0f1np1", a1) == 0);
        if (has_map)
                f.topology = topology_fixture_map("ring4", NULL, false, NULL);
        snprintf(f.self_id, sizeof(f.self_id), "%s", SPARK1);
        doctor = doctor_run(&f);
        checks = json_object_object_get(doctor, "checks");
        for (size_t i = 0; checks && i < json_object_array_length(checks); i++)
                if (strcmp(str(json_object_array_get_idx(checks, i), "id"), "twin-subnets") == 0)
                        found = json_object_get(json_object_array_get_idx(checks, i));
        json_object_put(doctor);
        fabric_facts_free(&f);
        CHECK(found != NULL);
        return found;
}

static bool has_evidence(json_object *check, const char *text)
{
        json_object *ev = json_object_object_get(check, "evidence");

        for (size_t i = 0; ev && i < json_object_array_length(ev); i++)
                if (strstr(json_object_get_string(json_object_array_get_idx(ev, i)), text))
                        return true;
        return false;
}

static void test_link_local_ring(void)
{
        json_object *c = twin_subnets("169.254.10.1/16", "169.254.20.1/16", true);

        CHECK_STREQ(str(c, "status"), "fail");
        CHECK(strstr(str(c, "summary"), "1 pair of ports facing different nodes share a subnet") != NULL);
        CHECK(has_evidence(c, "enp1s0f0np0 169.254.10.1/16 faces spark2 and enp1s0f1np1 169.254.20.1/16 "
                              "faces spark4"));
        CHECK(strstr(str(c, "fix"), "give each cable its own subnet") != NULL);
        CHECK(strstr(str(c, "fix"), "ip addr del 169.254.20.1/16 dev enp1s0f1np1") != NULL);
        /* The plan's address of each port, from the map. */
        CHECK(strstr(str(c, "fix"), "enp1s0f0np0 169.254.") != NULL && strstr(str(c, "fix"), "/24") != NULL);
        json_object_put(c);
}

static void test_subnet_per_cable(void)
{
        json_object *c = twin_subnets("10.10.1.1/24", "10.10.4.2/24", true);

        CHECK_STREQ(str(c, "status"), "ok");
        json_object_put(c);
        /* No map: where the ports lead is not known, so one subnet is not a fault yet. */
        c = twin_subnets("169.254.10.1/16", "169.254.20.1/16", false);
        CHECK_STREQ(str(c, "status"), "ok");
        json_object_put(c);
}

int main(void)
{
        RUN(test_link_local_ring);
        RUN(test_subnet_per_cable);
        return test_result();
}
