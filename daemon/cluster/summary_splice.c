#include "summary_splice.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_scan.h"
#include "common/macro.h"
#include "common/node_key.h"
#include "summary.h"

/* The elements of the array text, at most SUMMARY_SPLICE_MAX_ELEMENTS, into a new array of spans
 * (*ret, the caller frees); their number, or -EBADMSG when text is not such an array. */
static int elements_of(const char *text, size_t len, struct json_scan_span **ret)
{
        struct json_scan_span *spans = NULL, span;
        struct json_scan_list list;
        size_t n = 0, allocated = 0;
        int r;

        if (json_scan_open(&list, text, len, 0, '[') < 0)
                return -EBADMSG;
        while ((r = json_scan_element(&list, &span)) == 1) {
                if (n == SUMMARY_SPLICE_MAX_ELEMENTS) {
                        free(spans);
                        return -EBADMSG;
                }
                if (n == allocated) {
                        struct json_scan_span *more;

                        allocated = allocated ? 2 * allocated : 16;
                        more = realloc(spans, allocated * sizeof(*spans));
                        if (!more) {
                                free(spans);
                                return -ENOMEM;
                        }
                        spans = more;
                }
                spans[n++] = span;
        }
        if (r < 0 || !json_scan_at_end(text, len, list.pos)) {
                free(spans);
                return -EBADMSG;
        }
        *ret = spans;
        return (int)n;
}

static bool same_element(const char *a, struct json_scan_span sa, const char *b, struct json_scan_span sb)
{
        return sa.len == sb.len && memcmp(a + sa.start, b + sb.start, sa.len) == 0;
}

/* The elements first..end of text's spans as one array's text, appended to out at *pos. */
static size_t join(char *out, size_t pos, const char *text, const struct json_scan_span *spans, size_t first,
                   size_t end, bool *is_first)
{
        for (size_t i = first; i < end; i++) {
                if (!*is_first)
                        out[pos++] = ',';
                *is_first = false;
                memcpy(out + pos, text + spans[i].start, spans[i].len);
                pos += spans[i].len;
        }
        return pos;
}

json_object *summary_splice_new(const char *old_text, size_t old_len, const char *old_digest,
                                const char *new_text, size_t new_len)
{
        _cleanup_free_ struct json_scan_span *olds = NULL, *news = NULL;
        int n_old = elements_of(old_text, old_len, &olds), n_new;
        size_t prefix = 0, suffix = 0, add_len = 2, pos = 0;
        json_object *o;
        bool is_first = true;
        char *add;

        if (n_old < 0)
                return NULL;
        n_new = elements_of(new_text, new_len, &news);
        if (n_new < 0)
                return NULL;
        while (prefix < (size_t)n_old && prefix < (size_t)n_new &&
               same_element(old_text, olds[prefix], new_text, news[prefix]))
                prefix++;
        while (suffix < (size_t)n_old - prefix && suffix < (size_t)n_new - prefix &&
               same_element(old_text, olds[n_old - 1 - suffix], new_text, news[n_new - 1 - suffix]))
                suffix++;
        for (size_t i = prefix; i < (size_t)n_new - suffix; i++)
                add_len += news[i].len + 1;
        /* Worth it only when it saves most of the text. */
        if (add_len + 2 * SUMMARY_DIGEST_LEN > new_len / 2)
                return NULL;
        add = malloc(add_len + 1);
        if (!add)
                return NULL;
        add[pos++] = '[';
        pos = join(add, pos, new_text, news, prefix, (size_t)n_new - suffix, &is_first);
        add[pos++] = ']';
        add[pos] = '\0';
        o = json_object_new_object();
        if (o) {
                json_object_object_add(o, "from", json_object_new_string(old_digest));
                json_object_object_add(o, "at", json_object_new_int64((int64_t)prefix));
                json_object_object_add(o, "drop",
                                       json_object_new_int64((int64_t)((size_t)n_old - prefix - suffix)));
                json_object_object_add(o, "add", json_object_new_string_len(add, (int)pos));
        }
        free(add);
        return o;
}

static int read_count(json_object *o, const char *key, size_t *ret)
{
        json_object *v = NULL;
        int64_t n;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
                return -EBADMSG;
        n = json_object_get_int64(v);
        if (n < 0 || n > SUMMARY_SPLICE_MAX_ELEMENTS)
                return -EBADMSG;
        *ret = (size_t)n;
        return 0;
}

int summary_splice_read(json_object *o, struct summary_splice *ret)
{
        json_object *from = NULL, *add = NULL;

        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "from", &from) ||
            !json_object_is_type(from, json_type_string) || !json_object_object_get_ex(o, "add", &add) ||
            !json_object_is_type(add, json_type_string) || read_count(o, "at", &ret->at) < 0 ||
            read_count(o, "drop", &ret->drop) < 0)
                return -EBADMSG;
        ret->from = json_object_get_string(from);
        if (!node_key_is_hex(ret->from, SUMMARY_DIGEST_LEN))
                return -EBADMSG;
        ret->add = json_object_get_string(add);
        ret->add_len = (size_t)json_object_get_string_len(add);
        return 0;
}

char *summary_splice_apply(const char *base, size_t base_len, const struct summary_splice *sp, size_t *len)
{
        _cleanup_free_ struct json_scan_span *olds = NULL, *adds = NULL;
        int n_old = elements_of(base, base_len, &olds), n_add;
        size_t pos = 0;
        bool is_first = true;
        char *out;

        if (n_old < 0 || sp->at + sp->drop > (size_t)n_old)
                return NULL;
        n_add = elements_of(sp->add, sp->add_len, &adds);
        if (n_add < 0 || (size_t)n_old - sp->drop + (size_t)n_add > SUMMARY_SPLICE_MAX_ELEMENTS)
                return NULL;
        out = malloc(base_len + sp->add_len + 3);
        if (!out)
                return NULL;
        out[pos++] = '[';
        pos = join(out, pos, base, olds, 0, sp->at, &is_first);
        pos = join(out, pos, sp->add, adds, 0, (size_t)n_add, &is_first);
        pos = join(out, pos, base, olds, sp->at + sp->drop, (size_t)n_old, &is_first);
        out[pos++] = ']';
        out[pos] = '\0';
        *len = pos;
        return out;
}
