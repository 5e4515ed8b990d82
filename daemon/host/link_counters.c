#include "link_counters.h"

#include <errno.h>
#include <json-c/json.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "daemon/base/event.h"
#include "daemon/base/log.h"

#define COUNTERS_FILE     "links.json"
#define COUNTERS_MAX_SIZE (1024 * 1024)

struct saved_counters {
        char *name;
        uint64_t flaps;
        uint64_t corrections;
};

int link_counters_save(const struct link_counters *c, struct link *const *links, size_t n)
{
        json_object *root, *map;
        const char *s;
        size_t len;
        int r, was;

        if (!c->store)
                return 0;
        root = json_object_new_object();
        map = json_object_new_object();
        json_object_object_add(root, "version", json_object_new_int(1));
        for (size_t i = 0; i < c->n_saved; i++) {
                json_object *o = json_object_new_object();

                json_object_object_add(o, "flaps", json_object_new_int64((int64_t)c->saved[i].flaps));
                json_object_object_add(o, "corrections",
                                       json_object_new_int64((int64_t)c->saved[i].corrections));
                json_object_object_add(map, c->saved[i].name, o);
        }
        for (size_t i = 0; i < n; i++) {
                const struct link *l = links[i];
                json_object *o;

                if (!l->flaps && !l->corrections)
                        continue;
                o = json_object_new_object();
                json_object_object_add(o, "flaps", json_object_new_int64((int64_t)l->flaps));
                json_object_object_add(o, "corrections", json_object_new_int64((int64_t)l->corrections));
                json_object_object_add(map, l->name, o);
        }
        json_object_object_add(root, "links", map);
        s = json_object_to_json_string_length(root, JSON_C_TO_STRING_PLAIN, &len);
        was = store_last_save(c->store, COUNTERS_FILE);
        r = store_write(c->store, COUNTERS_FILE, s, len);
        json_object_put(root);
        /* Every flap saves: a full disk is told once, and again when saving works again. */
        if (r < 0 && was == 0)
                log_warning("cannot save link counters to %s/%s: %s; tried again at every change",
                            store_path(c->store), COUNTERS_FILE, strerror(-r));
        else if (r == 0 && was < 0)
                log_notice("link counters saved to %s/%s again", store_path(c->store), COUNTERS_FILE);
        return r;
}

int link_counters_hold(struct link_counters *c, const char *name, uint64_t flaps, uint64_t corrections)
{
        struct saved_counters *v = realloc(c->saved, (c->n_saved + 1) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        c->saved = v;
        v[c->n_saved] = (struct saved_counters){ strdup(name), flaps, corrections };
        if (!v[c->n_saved].name)
                return -ENOMEM;
        c->n_saved++;
        return 0;
}

void link_counters_done(struct link_counters *c)
{
        for (size_t i = 0; i < c->n_saved; i++)
                free(c->saved[i].name);
        free(c->saved);
        c->saved = NULL;
        c->n_saved = 0;
}

static int counters_parse(struct link_counters *c, const char *data, size_t len)
{
        json_object *root = json_tokener_parse(data), *version, *map;
        int r = 0;

        if (!root || strlen(data) != len || !json_object_is_type(root, json_type_object) ||
            !json_object_object_get_ex(root, "version", &version) || json_object_get_int(version) != 1 ||
            !json_object_object_get_ex(root, "links", &map) || !json_object_is_type(map, json_type_object)) {
                json_object_put(root);
                return -EBADMSG;
        }
        json_object_object_foreach(map, name, o) {
                json_object *flaps, *corrections;

                if (!json_object_is_type(o, json_type_object) ||
                    !json_object_object_get_ex(o, "flaps", &flaps) ||
                    !json_object_object_get_ex(o, "corrections", &corrections) ||
                    !json_object_is_type(flaps, json_type_int) ||
                    !json_object_is_type(corrections, json_type_int) || json_object_get_int64(flaps) < 0 ||
                    json_object_get_int64(corrections) < 0 || strlen(name) >= IF_NAMESIZE) {
                        r = -EBADMSG;
                        break;
                }
                r = link_counters_hold(c, name, (uint64_t)json_object_get_int64(flaps),
                                       (uint64_t)json_object_get_int64(corrections));
                if (r < 0)
                        break;
        }
        json_object_put(root);
        return r;
}

void link_counters_load(struct link_counters *c)
{
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        int r;

        if (!c->store)
                return;
        r = store_read(c->store, COUNTERS_FILE, COUNTERS_MAX_SIZE, &data, &len);
        if (r == -ENOENT)
                return;
        if (r == 0)
                r = counters_parse(c, data, len);
        if (r == -EBADMSG || r == -EFBIG) {
                struct log_field f[] = { { "file", COUNTERS_FILE } };

                link_counters_done(c);
                r = store_quarantine(c->store, COUNTERS_FILE);
                event_emit(
                        EVENT_STATE_QUARANTINED, f, ARRAY_SIZE(f),
                        "state file %s/%s is damaged; moved aside to %s.corrupt%s; link counters start at 0",
                        store_path(c->store), COUNTERS_FILE, COUNTERS_FILE, r < 0 ? " (failed)" : "");
        } else if (r < 0) {
                log_warning("cannot read %s/%s: %s; link counters start at 0", store_path(c->store),
                            COUNTERS_FILE, strerror(-r));
        }
}

void link_counters_take(struct link_counters *c, struct link *l)
{
        for (size_t i = 0; i < c->n_saved; i++) {
                if (strcmp(c->saved[i].name, l->name) != 0)
                        continue;
                l->flaps = c->saved[i].flaps;
                l->corrections = c->saved[i].corrections;
                free(c->saved[i].name);
                c->saved[i] = c->saved[--c->n_saved];
                return;
        }
}
