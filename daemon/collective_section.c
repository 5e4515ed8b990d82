#include "collective_section.h"

#include <stdio.h>
#include <string.h>

/* Texts in the section are cut here: a summary is at most 57344 bytes for all its sections. */
#define TEXT_MAX 240

static json_object *copy_text(json_object *o, const char *key)
{
        json_object *v;
        char buf[TEXT_MAX + 1];

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        snprintf(buf, sizeof(buf), "%s", json_object_get_string(v));
        return json_object_new_string(buf);
}

static json_object *copy(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) ? json_object_get(v) : NULL;
}

/* The largest size of the first op: the figure nccl-tests users read. */
static void add_largest(json_object *out, json_object *r)
{
        json_object *ops, *sizes, *last;

        /* The record may come from a history file: types checked before any array call. */
        if (!json_object_object_get_ex(r, "ops", &ops) || !json_object_is_type(ops, json_type_array) ||
            !json_object_array_length(ops) ||
            !json_object_object_get_ex(json_object_array_get_idx(ops, 0), "sizes", &sizes) ||
            !json_object_is_type(sizes, json_type_array) || !json_object_array_length(sizes))
                return;
        last = json_object_array_get_idx(sizes, json_object_array_length(sizes) - 1);
        json_object_object_add(out, "op", copy_text(json_object_array_get_idx(ops, 0), "op"));
        json_object_object_add(out, "bytes", copy(last, "bytes"));
        json_object_object_add(out, "correct", copy(last, "correct"));
}

json_object *collective_section(json_object *latest)
{
        json_object *r = NULL, *v, *out, *nodes, *list;

        for (size_t i = 0; latest && i < json_object_array_length(latest) && !r; i++) {
                json_object *e = json_object_array_get_idx(latest, i);

                if (json_object_object_get_ex(e, "collective", &v) && json_object_get_boolean(v))
                        r = e;
        }
        if (!r)
                return NULL;
        out = json_object_new_object();
        json_object_object_add(out, "at", copy_text(r, "started_at"));
        json_object_object_add(out, "status", copy_text(r, "status"));
        json_object_object_add(out, "verdict", copy_text(r, "verdict"));
        json_object_object_add(out, "nranks", copy(r, "nranks"));
        json_object_object_add(out, "busbw_gbytes", copy(r, "busbw_gbytes"));
        json_object_object_add(out, "algbw_gbytes", copy(r, "algbw_gbytes"));
        json_object_object_add(out, "expected_busbw_gbytes", copy(r, "expected_busbw_gbytes"));
        json_object_object_add(out, "expected_source", copy_text(r, "expected_source"));
        json_object_object_add(out, "error", copy_text(r, "error"));
        add_largest(out, r);
        list = json_object_new_array();
        if (json_object_object_get_ex(r, "nodes", &nodes))
                for (size_t i = 0; i < json_object_array_length(nodes) && i < 64; i++) {
                        json_object *n = json_object_array_get_idx(nodes, i), *o = json_object_new_object();

                        json_object_object_add(o, "name", copy_text(n, "name"));
                        json_object_object_add(o, "status", copy_text(n, "status"));
                        json_object_object_add(o, "last_phase", copy_text(n, "last_phase"));
                        json_object_object_add(o, "error", copy_text(n, "error"));
                        json_object_array_add(list, o);
                }
        json_object_object_add(out, "nodes", list);
        return out;
}
