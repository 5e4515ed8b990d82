#include "summary.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/json_get.h"
#include "common/json_strict.h"
#include "common/text_check.h"

bool summary_is_id(const char *s)
{
        return s && strlen(s) == SUMMARY_ID_LEN && strspn(s, "0123456789abcdef") == SUMMARY_ID_LEN;
}

bool summary_is_section_name(const char *s)
{
        size_t len = strlen(s);

        return len > 0 && len <= SUMMARY_SECTION_NAME_MAX &&
               strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == len;
}

static int get_string(json_object *msg, const char *key, const char **ret)
{
        json_object *v;

        if (!json_object_object_get_ex(msg, key, &v) || !json_object_is_type(v, json_type_string))
                return -EBADMSG;
        *ret = json_object_get_string(v);
        return 0;
}

/* A whole number in [min, max]; json-c keeps integers beyond int64 out (json_strict refuses them). */
static int get_uint(json_object *msg, const char *key, uint64_t min, uint64_t max, uint64_t *ret)
{
        json_object *v;
        int64_t n;

        if (!json_object_object_get_ex(msg, key, &v) || !json_object_is_type(v, json_type_int))
                return -EBADMSG;
        n = json_object_get_int64(v);
        if (n < 0 || (uint64_t)n < min || (uint64_t)n > max)
                return -EBADMSG;
        *ret = (uint64_t)n;
        return 0;
}

#define REFUSE(...)                                                                                         \
        do {                                                                                                \
                snprintf(why, why_size, __VA_ARGS__);                                                       \
                return -EBADMSG;                                                                            \
        } while (0)

static int check_sections(json_object *sections, char *why, size_t why_size)
{
        size_t n = 0;

        if (!json_object_is_type(sections, json_type_object))
                REFUSE("\"sections\" is not an object");
        json_object_object_foreach(sections, key, value) {
                (void)value;
                if (!summary_is_section_name(key))
                        REFUSE("section name \"%.40s\" is not 1 to %d of a-z, 0-9, '_' or '-'", key,
                               SUMMARY_SECTION_NAME_MAX);
                if (++n > SUMMARY_MAX_SECTIONS)
                        REFUSE("more than %d sections", SUMMARY_MAX_SECTIONS);
        }
        return 0;
}

/* The fields a summary and an alive share; type is the one expected. */
static int check_envelope(json_object *msg, const char *type_wanted, struct summary *s, char *why,
                          size_t why_size)
{
        const char *type;
        uint64_t format;
        size_t len;

        if (!json_object_is_type(msg, json_type_object))
                REFUSE("not a JSON object");
        len = json_plain_text_length(msg);
        if (len > SUMMARY_MAX_BYTES) {
                snprintf(why, why_size, "%zu bytes, over the limit of %d bytes", len, SUMMARY_MAX_BYTES);
                return -EMSGSIZE;
        }
        if (get_string(msg, "type", &type) < 0 || strcmp(type, type_wanted) != 0)
                REFUSE("\"type\" is not \"%s\"", type_wanted);
        if (get_uint(msg, "format", 1, INT32_MAX, &format) < 0)
                REFUSE("\"format\" is not a format number from 1");
        s->format = (int64_t)format;
        if (get_string(msg, "origin", &s->origin) < 0 || !summary_is_id(s->origin))
                REFUSE("\"origin\" is not a node id of %d hex digits", SUMMARY_ID_LEN);
        if (get_string(msg, "instance", &s->instance) < 0 || !summary_is_id(s->instance))
                REFUSE("\"instance\" is not an id of %d hex digits", SUMMARY_ID_LEN);
        if (get_string(msg, "name", &s->name) < 0 || !text_is_node_name(s->name))
                REFUSE("\"name\" is not a node name of 1 to %d letters, digits, '-', '_' or '.'",
                       SUMMARY_NODE_NAME_MAX);
        if (get_uint(msg, "seq", 1, INT64_MAX, &s->seq) < 0)
                REFUSE("\"seq\" is not a sequence number from 1");
        if (get_uint(msg, "age_ms", 0, SUMMARY_MAX_AGE_MS, &s->age_ms) < 0)
                REFUSE("\"age_ms\" is not milliseconds from 0 to %" PRIu64, (uint64_t)SUMMARY_MAX_AGE_MS);
        if (get_uint(msg, "uptime_ms", 0, INT64_MAX, &s->uptime_ms) < 0)
                REFUSE("\"uptime_ms\" is not a number of milliseconds");
        return 0;
}

int summary_check(json_object *msg, struct summary *ret, char *why, size_t why_size)
{
        struct summary s = { .msg = msg };
        int r = check_envelope(msg, SUMMARY_TYPE, &s, why, why_size);

        if (r < 0)
                return r;
        if (!json_object_object_get_ex(msg, "sections", &s.sections))
                REFUSE("no \"sections\"");
        if (check_sections(s.sections, why, why_size) < 0)
                return -EBADMSG;
        *ret = s;
        return 0;
}

int summary_check_alive(json_object *msg, struct summary *ret, char *why, size_t why_size)
{
        struct summary s = { .msg = msg, .is_alive = true };
        int r = check_envelope(msg, SUMMARY_ALIVE_TYPE, &s, why, why_size);

        if (r < 0)
                return r;
        if (json_object_object_get_ex(msg, "sections", NULL))
                REFUSE("an alive with \"sections\"");
        *ret = s;
        return 0;
}

int summary_parse(const char *text, size_t len, struct summary *ret, char *why, size_t why_size)
{
        enum json_strict_error error;
        json_object *msg = NULL;
        int r;

        if (len > SUMMARY_MAX_BYTES + 1024) {
                snprintf(why, why_size, "%zu bytes, over the limit of %d bytes", len, SUMMARY_MAX_BYTES);
                return -EMSGSIZE;
        }
        /* The envelope and the section objects add two levels to a section's own nesting. */
        if (json_strict_parse(text, len, SUMMARY_MAX_DEPTH + 2, &msg, &error, why, why_size) < 0) {
                if (error == JSON_STRICT_SYNTAX)
                        snprintf(why, why_size, "not JSON");
                return -EBADMSG;
        }
        r = summary_check(msg, ret, why, why_size);
        if (r < 0)
                json_object_put(msg);
        return r;
}

static json_object *envelope_new(const char *type, const char *origin, const char *name,
                                 const char *instance, uint64_t seq, uint64_t uptime_ms)
{
        json_object *m = json_object_new_object();

        json_object_object_add(m, "type", json_object_new_string(type));
        json_object_object_add(m, "format", json_object_new_int(SUMMARY_FORMAT));
        json_object_object_add(m, "origin", json_object_new_string(origin));
        json_object_object_add(m, "name", json_object_new_string(name));
        json_object_object_add(m, "instance", json_object_new_string(instance));
        json_object_object_add(m, "seq", json_object_new_int64((int64_t)seq));
        json_object_object_add(m, "age_ms", json_object_new_int64(0));
        json_object_object_add(m, "uptime_ms", json_object_new_int64((int64_t)uptime_ms));
        return m;
}

json_object *summary_new(const char *origin, const char *name, const char *instance, uint64_t seq,
                         uint64_t uptime_ms, json_object *sections)
{
        json_object *m = envelope_new(SUMMARY_TYPE, origin, name, instance, seq, uptime_ms);

        json_object_object_add(m, "sections", json_object_get(sections));
        return m;
}

json_object *summary_new_alive(const char *origin, const char *name, const char *instance, uint64_t seq,
                               uint64_t uptime_ms)
{
        return envelope_new(SUMMARY_ALIVE_TYPE, origin, name, instance, seq, uptime_ms);
}
