#include "collective_wire.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/text_check.h"

static const char *const types[] = {
        [COLLECTIVE_START] = "collective-start", [COLLECTIVE_ID] = "collective-id",
        [COLLECTIVE_PHASE] = "collective-phase", [COLLECTIVE_RESULT] = "collective-result",
        [COLLECTIVE_ABORT] = "collective-abort", [COLLECTIVE_ALIVE] = "collective-alive",
};

const char *collective_wire_type(enum collective_msg type)
{
        return types[type];
}

bool collective_wire_is_id(const char *s)
{
        return s && strlen(s) == 32 && strspn(s, "0123456789abcdef") == 32;
}

static const char *get_string(json_object *msg, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(msg, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

/* An integer member from min to max into *out; -EINVAL with why otherwise. */
static int get_int(json_object *msg, const char *key, int64_t min, int64_t max, int64_t *out, char *err,
                   size_t size)
{
        json_object *v;

        if (!json_object_object_get_ex(msg, key, &v) || !json_object_is_type(v, json_type_int) ||
            (*out = json_object_get_int64(v)) < min || *out > max) {
                snprintf(err, size, "%s is not an integer from %lld to %lld", key, (long long)min,
                         (long long)max);
                return -EINVAL;
        }
        return 0;
}

static bool is_ipv4(const char *s)
{
        unsigned a, b, c, d;
        char tail;

        return s && strlen(s) <= 15 && sscanf(s, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a < 256 &&
               b < 256 && c < 256 && d < 256;
}

/* The parts of a result the coordinator walks (merged_ops, the section): ops a list of objects,
 * each one's sizes, when there, a list of objects. json-c asserts on an array call given
 * anything else, so one rank's malformed result would end the coordinator's daemon. */
static bool result_ops_are_well_formed(json_object *result)
{
        json_object *ops, *sizes;

        if (!json_object_object_get_ex(result, "ops", &ops))
                return true;
        if (!json_object_is_type(ops, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(ops); i++) {
                json_object *op = json_object_array_get_idx(ops, i);

                if (!json_object_is_type(op, json_type_object))
                        return false;
                if (!json_object_object_get_ex(op, "sizes", &sizes))
                        continue;
                if (!json_object_is_type(sizes, json_type_array))
                        return false;
                for (size_t k = 0; k < json_object_array_length(sizes); k++)
                        if (!json_object_is_type(json_object_array_get_idx(sizes, k), json_type_object))
                                return false;
        }
        return true;
}

static int read_fields(json_object *msg, struct collective_wire *w, char *err, size_t size)
{
        int64_t v;
        json_object *o;

        if (w->type == COLLECTIVE_START || w->type == COLLECTIVE_PHASE || w->type == COLLECTIVE_RESULT) {
                if (get_int(msg, "rank", 0, COLLECTIVE_NODES_MAX - 1, &v, err, size) < 0)
                        return -EINVAL;
                w->rank = (int)v;
        }
        switch (w->type) {
        case COLLECTIVE_START:
                if (get_int(msg, "nranks", 2, COLLECTIVE_NODES_MAX, &v, err, size) < 0)
                        return -EINVAL;
                w->nranks = (int)v;
                if (w->rank >= w->nranks) {
                        snprintf(err, size, "rank %d is not below nranks %d", w->rank, w->nranks);
                        return -EINVAL;
                }
                if (get_int(msg, "deadline_s", 1, COLLECTIVE_DEADLINE_MAX, &v, err, size) < 0)
                        return -EINVAL;
                w->deadline_s = (unsigned)v;
                w->head = get_string(msg, "head");
                if (!is_ipv4(w->head)) {
                        snprintf(err, size, "head is not an IPv4 address");
                        return -EINVAL;
                }
                if (!json_object_object_get_ex(msg, "params", &w->params) ||
                    !json_object_is_type(w->params, json_type_object)) {
                        snprintf(err, size, "params is not an object");
                        return -EINVAL;
                }
                return 0;
        case COLLECTIVE_ID:
                w->nccl_id = get_string(msg, "nccl_id");
                if (!w->nccl_id || strlen(w->nccl_id) != COLLECTIVE_ID_HEX ||
                    strspn(w->nccl_id, "0123456789abcdef") != COLLECTIVE_ID_HEX) {
                        snprintf(err, size, "nccl_id is not %d lower-case hex digits", COLLECTIVE_ID_HEX);
                        return -EINVAL;
                }
                return 0;
        case COLLECTIVE_PHASE:
                w->phase = get_string(msg, "phase");
                if (!w->phase || !*w->phase || strlen(w->phase) > COLLECTIVE_PHASE_MAX ||
                    strspn(w->phase, "abcdefghijklmnopqrstuvwxyz0123456789_- ") != strlen(w->phase)) {
                        snprintf(err, size, "phase is not 1 to %d of a-z 0-9 _ - and spaces",
                                 COLLECTIVE_PHASE_MAX);
                        return -EINVAL;
                }
                return 0;
        case COLLECTIVE_RESULT:
                if (!json_object_object_get_ex(msg, "result", &o) ||
                    !json_object_is_type(o, json_type_object) ||
                    strlen(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) >
                            COLLECTIVE_RESULT_MAX) {
                        snprintf(err, size, "result is not an object of at most %d bytes",
                                 COLLECTIVE_RESULT_MAX);
                        return -EINVAL;
                }
                if (!result_ops_are_well_formed(o)) {
                        snprintf(err, size,
                                 "result's ops is not a list of objects whose sizes are lists of objects");
                        return -EINVAL;
                }
                w->result = o;
                return 0;
        case COLLECTIVE_ALIVE:
                return 0;
        case COLLECTIVE_ABORT:
                w->reason = get_string(msg, "reason");
                if (!w->reason || !text_is_clean(w->reason, COLLECTIVE_REASON_MAX)) {
                        snprintf(err, size, "reason is not clean text of less than %d bytes",
                                 COLLECTIVE_REASON_MAX);
                        return -EINVAL;
                }
                return 0;
        }
        return -EINVAL;
}

int collective_wire_read(json_object *msg, struct collective_wire *w, char *err, size_t size)
{
        const char *type = get_string(msg, "type");
        size_t i;
        int64_t v;

        *w = (struct collective_wire){ 0 };
        for (i = 0; type && i < sizeof(types) / sizeof(types[0]); i++)
                if (strcmp(type, types[i]) == 0)
                        break;
        if (!type || i == sizeof(types) / sizeof(types[0])) {
                snprintf(err, size, "type is not one of the collective's");
                return -EINVAL;
        }
        w->type = (enum collective_msg)i;
        w->cid = get_string(msg, "cid");
        w->from = get_string(msg, "from");
        w->to = get_string(msg, "to");
        if (!collective_wire_is_id(w->cid) || !collective_wire_is_id(w->from) ||
            !collective_wire_is_id(w->to)) {
                snprintf(err, size, "cid, from and to are not 32 lower-case hex digits each");
                return -EINVAL;
        }
        if (get_int(msg, "hops", 0, COLLECTIVE_HOPS_MAX, &v, err, size) < 0)
                return -EINVAL;
        w->hops = (unsigned)v;
        if (get_int(msg, "mid", 1, INT32_MAX, &v, err, size) < 0)
                return -EINVAL;
        w->mid = (uint32_t)v;
        return read_fields(msg, w, err, size);
}

json_object *collective_wire_new(enum collective_msg type, const char *cid, const char *from, const char *to,
                                 uint32_t mid)
{
        json_object *o = json_object_new_object();

        json_object_object_add(o, "type", json_object_new_string(types[type]));
        json_object_object_add(o, "cid", json_object_new_string(cid));
        json_object_object_add(o, "from", json_object_new_string(from));
        json_object_object_add(o, "to", json_object_new_string(to));
        json_object_object_add(o, "hops", json_object_new_int(0));
        json_object_object_add(o, "mid", json_object_new_int64(mid));
        return o;
}
