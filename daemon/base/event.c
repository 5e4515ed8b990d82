#include "event.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct event_info {
        const char *name;
        const char *message_id;
        int level;
};

/* MESSAGE_IDs are part of the interface: people filter on them, so they never change. */
static const struct event_info event_table[_EVENT_TYPE_MAX] = {
        [EVENT_DAEMON_STARTED] = { "daemon-started", "fdf5842570d44465bbea7c872f6deaf2", LOG_INFO },
        [EVENT_DAEMON_STOPPING] = { "daemon-stopping", "7e78d423f46c4347bdf39637ed23cf57", LOG_INFO },
        [EVENT_CONFIG_RELOADED] = { "config-reloaded", "5de27b39283640db841238289930165f", LOG_NOTICE },
        [EVENT_CONFIG_REJECTED] = { "config-rejected", "8d872d37a8754add93d5d5ce886b7f6b", LOG_ERR },
        [EVENT_STATE_QUARANTINED] = { "state-quarantined", "6bf8a53b3fcf491b95ae6accebc35073", LOG_WARNING },
        [EVENT_LINK_DOWN] = { "link-down", "700a3d21d70246b78e521f3025ede72c", LOG_WARNING },
        [EVENT_LINK_UP] = { "link-up", "7a6dea60a9ef4156a78ca2d74a54bec1", LOG_NOTICE },
        [EVENT_LINK_FLAPPING] = { "link-flapping", "840153a15f924209b21dcdca3969da42", LOG_ERR },
        [EVENT_LINK_STABLE] = { "link-stable", "b1873a04fe6a494d9176e92772af8deb", LOG_NOTICE },
        [EVENT_MTU_CORRECTED] = { "mtu-corrected", "406a7fa9a18345a2945690c4409f8424", LOG_WARNING },
        [EVENT_MTU_DRIFT] = { "mtu-drift", "6595b992721a4be3b4cf7757f6ec4552", LOG_WARNING },
        [EVENT_ADMIN_STATE_CORRECTED] = { "admin-state-corrected", "53a9cb335aac4934a63f166451ecc84c",
                                          LOG_WARNING },
        [EVENT_ADMIN_STATE_DRIFT] = { "admin-state-drift", "de5e0dc182744ef78185629be58d208d", LOG_WARNING },
        [EVENT_SYSCTL_CORRECTED] = { "sysctl-corrected", "4a3c61b33d764d67aa38109dbfc3124d", LOG_WARNING },
        [EVENT_PEER_UP] = { "peer-up", "70d2c0667bb84f07b8d687af4b16e346", LOG_NOTICE },
        [EVENT_PEER_DOWN] = { "peer-down", "39589fe4ae084e51a6fbe5b5f413d3bc", LOG_WARNING },
        [EVENT_PEER_REJECTED] = { "peer-rejected", "1ed7ce7360b548378342e98bdcb71c4a", LOG_WARNING },
        [EVENT_PEER_MTU_MISMATCH] = { "mtu-mismatch", "2b92a0878e94496c9ab9fc4f7f6fb86b", LOG_ERR },
        [EVENT_PROBE_DONE] = { "probe-done", "40cd6fed20cf4ba5aef3762d7b6c65dc", LOG_INFO },
        [EVENT_PROBE_DEGRADED] = { "probe-degraded", "b9b9342f5dbf4b10a02de448fc144571", LOG_ERR },
        [EVENT_PROBE_FAILED] = { "probe-failed", "159ce9cd0fd747b88217706b5340b0df", LOG_ERR },
        [EVENT_STALE_INITIALIZATION] = { "stale-initialization", "53d53fe77bc84f1896ff423df4190ec8",
                                         LOG_ERR },
        [EVENT_GID_CHANGED] = { "gid-changed", "2742b663cdc3475b9254e1bfebc7a59e", LOG_WARNING },
        [EVENT_PORT_ERRORS] = { "port-errors", "ddbea50699014395b9477bee383622b2", LOG_WARNING },
        [EVENT_SYSCTL_DRIFT] = { "sysctl-drift", "3695865f89ff47b8bde8d62e63f97631", LOG_WARNING },
        [EVENT_TOPOLOGY_CHANGED] = { "topology-changed", "9d322fb4640e4f5bb799c0a7910b0eab", LOG_NOTICE },
        [EVENT_WIRING_PROBLEM] = { "wiring-problem", "765299643d504b1b9a1b8db7c64ed155", LOG_WARNING },
};

static event_sink_fn event_sink;
static void *event_sink_userdata;

const char *event_type_to_string(enum event_type type)
{
        return type < _EVENT_TYPE_MAX ? event_table[type].name : NULL;
}

int event_type_from_string(const char *name, enum event_type *out)
{
        for (size_t i = 0; i < _EVENT_TYPE_MAX; i++) {
                if (strcmp(event_table[i].name, name) == 0) {
                        *out = (enum event_type)i;
                        return 0;
                }
        }
        return -ENOENT;
}

const char *event_type_message_id(enum event_type type)
{
        return type < _EVENT_TYPE_MAX ? event_table[type].message_id : NULL;
}

void event_set_sink(event_sink_fn sink, void *userdata)
{
        event_sink = sink;
        event_sink_userdata = userdata;
}

static json_object *event_to_json(const struct event_info *info, const struct log_field *fields, size_t n,
                                  const char *message)
{
        json_object *ev = json_object_new_object(), *obj = json_object_new_object();
        struct timespec ts;
        struct tm tm;
        char when[64];

        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);

        json_object_object_add(ev, "event", json_object_new_string(info->name));
        json_object_object_add(ev, "time", json_object_new_string(when));
        json_object_object_add(ev, "priority", json_object_new_string(log_level_to_string(info->level)));
        json_object_object_add(ev, "message", json_object_new_string(message));
        for (size_t i = 0; i < n; i++)
                if (fields[i].value)
                        json_object_object_add(obj, fields[i].key, json_object_new_string(fields[i].value));
        json_object_object_add(ev, "fields", obj);
        return ev;
}

void event_emit(enum event_type type, const struct log_field *fields, size_t n, const char *fmt, ...)
{
        const struct event_info *info = &event_table[type];
        struct log_field all[n + 1];
        char message[2048];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(message, sizeof(message), fmt, ap);
        va_end(ap);

        all[0] = (struct log_field){ "event", info->name };
        for (size_t i = 0; i < n; i++)
                all[i + 1] = fields[i];
        log_structured(info->level, info->message_id, all, n + 1, "%s", message);

        if (event_sink) {
                json_object *ev = event_to_json(info, fields, n, message);

                event_sink(ev, event_sink_userdata);
                json_object_put(ev);
        }
}
