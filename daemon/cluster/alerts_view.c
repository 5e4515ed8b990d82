#include "alerts_view.h"

#include <stdlib.h>
#include <string.h>

#include "common/json_raw.h"
#include "common/jsonrpc.h"

static const char *jstr(json_object *o, const char *key, const char *fallback)
{
        const char *s;

        return jsonrpc_param_string(o, key, &s) > 0 ? s : fallback;
}

static json_object *section_of(json_object *node, const char *name)
{
        json_object *sections = NULL, *s = NULL;

        json_object_object_get_ex(node, "sections", &sections);
        if (sections)
                json_object_object_get_ex(sections, name, &s);
        return s;
}

/* Newest first; an alert without a time after those with one; then by node, id and subject. */
static int by_newest(const void *p, const void *q)
{
        json_object *x = *(json_object *const *)p, *y = *(json_object *const *)q;
        const char *keys[] = { "name", "node_id", "id", "subject", "summary" };
        int r = strcmp(jstr(y, "since", ""), jstr(x, "since", ""));

        for (size_t i = 0; !r && i < sizeof(keys) / sizeof(keys[0]); i++)
                r = strcmp(jstr(x, keys[i], ""), jstr(y, keys[i], ""));
        return r;
}

json_object *alerts_view(json_object *nodes)
{
        json_object *alerts = json_object_new_array();

        for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
                json_object *node = json_object_array_get_idx(nodes, i);
                /* Another node's sections are held as their text: read back for the call. */
                json_object *list = json_raw_parsed(section_of(node, "alerts"));

                for (size_t k = 0; list && json_object_is_type(list, json_type_array) &&
                                   k < json_object_array_length(list);
                     k++) {
                        json_object *a = json_object_array_get_idx(list, k), *o;

                        if (!json_object_is_type(a, json_type_object))
                                continue;
                        o = json_object_new_object();
                        json_object_object_add(o, "node_id",
                                               json_object_new_string(jstr(node, "node_id", "?")));
                        json_object_object_add(o, "name", json_object_new_string(jstr(node, "name", "?")));
                        json_object_object_add(o, "stale",
                                               json_object_get(json_object_object_get(node, "stale")));
                        json_object_object_foreach(a, key, value) {
                                if (!json_object_object_get_ex(o, key, NULL))
                                        json_object_object_add(o, key, json_object_get(value));
                        }
                        json_object_array_add(alerts, o);
                }
                json_object_put(list);
        }
        json_object_array_sort(alerts, by_newest);
        return alerts;
}
