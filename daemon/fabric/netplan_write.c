/* This node's netplan file, planned when asked, without readdressing a busy netdev. */
#include "netplan_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "common/text_check.h"

static bool is_planned(const struct topology_netplan_entry *e, const char *address)
{
        for (size_t i = 0; i < e->n_addresses; i++)
                if (strcmp(e->addresses[i], address) == 0)
                        return true;
        return false;
}

/* The netdev's throughput sample from the counter watch, or NULL. */
static const struct port_counter_sample *traffic_of(const struct fabric_facts *f, const char *netdev)
{
        for (size_t i = 0; i < f->counters.n; i++)
                if (strcmp(f->counters.v[i].netdev, netdev) == 0)
                        return &f->counters.v[i];
        return NULL;
}

/* Why e's netdev must keep its addresses, or NULL when the plan may replace them. */
static const char *busy_reason(const struct topology_netplan_entry *e, const struct fabric_facts *f,
                               char *buf, size_t size)
{
        const struct port_counter_sample *s;
        const char *other = NULL;

        for (size_t i = 0; i < f->n_addresses && !other; i++)
                if (strcmp(f->addresses[i].ifname, e->netdev) == 0 && strchr(f->addresses[i].address, '.') &&
                    !is_planned(e, f->addresses[i].address))
                        other = f->addresses[i].address;
        if (!other)
                return NULL;
        s = traffic_of(f, e->netdev);
        if (!s || !s->gbps_from_usec) {
                snprintf(
                        buf, size,
                        "it has %s, not the planned %s, and its traffic is not known (the counter watch has "
                        "not looked twice, or [counters] period is 0)",
                        other, e->addresses[0]);
                return buf;
        }
        if (s->gbps[0] <= NETPLAN_WRITE_TRAFFIC_GBPS && s->gbps[1] <= NETPLAN_WRITE_TRAFFIC_GBPS)
                return NULL;
        snprintf(buf, size,
                 "it has %s, not the planned %s, and carries traffic (%.3f Gb/s received, %.3f sent): "
                 "readdressing it would cut the jobs using it; write again when it is idle",
                 other, e->addresses[0], s->gbps[0], s->gbps[1]);
        return buf;
}

void netplan_write_refuse_busy(struct topology_netplan *plan, const struct fabric_facts *f,
                               json_object *refused)
{
        size_t kept = 0;

        for (size_t i = 0; i < plan->n_entries; i++) {
                const char *why;
                json_object *one;
                char buf[512];

                why = busy_reason(&plan->entries[i], f, buf, sizeof(buf));
                if (!why) {
                        plan->entries[kept++] = plan->entries[i];
                        continue;
                }
                one = json_object_new_object();

                json_object_object_add(one, "netdev", json_object_new_string(plan->entries[i].netdev));
                json_object_object_add(one, "why", json_object_new_string(why));
                json_object_array_add(refused, one);
        }
        plan->n_entries = kept;
}

int netplan_write_plan(json_object *map, const char *node_id, const struct fabric_facts *f, const char *path,
                       json_object **result, char *why, size_t why_size)
{
        json_object *o, *refused = json_object_new_array(), *netdevs = json_object_new_array();
        _cleanup_free_ char *yaml = NULL;
        _cleanup_strv_ char **own = calloc(1, sizeof(char *));
        struct topology_netplan plan;
        int r = own ? 0 : -ENOMEM;

        /* The file's keys are this host's own netdevs, as the kernel names them, never a name the
         * map got from another node. */
        for (size_t i = 0; r == 0 && i < f->netifs.n; i++)
                if (text_is_netdev_name(f->netifs.v[i].name))
                        r = strv_push(&own, f->netifs.v[i].name);
        if (r == 0)
                r = topology_netplan_of(map, node_id, own, &plan, why, why_size);
        else
                snprintf(why, why_size, "out of memory");
        if (r == 0) {
                netplan_write_refuse_busy(&plan, f, refused);
                if (plan.n_entries && !(yaml = topology_netplan_yaml(&plan))) {
                        snprintf(why, why_size, "out of memory");
                        r = -ENOMEM;
                }
        }
        if (r < 0) {
                json_object_put(refused);
                json_object_put(netdevs);
                return r;
        }
        for (size_t i = 0; i < plan.n_entries; i++)
                json_object_array_add(netdevs, json_object_new_string(plan.entries[i].netdev));
        o = json_object_new_object();
        json_object_object_add(o, "path", json_object_new_string(path));
        json_object_object_add(o, "yaml", yaml ? json_object_new_string(yaml) : NULL);
        json_object_object_add(o, "netdevs", netdevs);
        json_object_object_add(o, "refused", refused);
        *result = o;
        return 0;
}
