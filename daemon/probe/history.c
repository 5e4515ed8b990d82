#include "history.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "daemon/base/event.h"
#include "daemon/base/heap_trim.h"
#include "daemon/base/log.h"

#define HISTORY_FILE          "history.json"
#define HISTORY_MAX_SIZE      (64 * 1024 * 1024)
#define HISTORY_VERSION       2
#define HISTORY_BASELINES_MAX 512

/* A result as the JSON text it is saved as, parsed again only when asked for: about a fifth of the
 * memory of its json_object tree, and a full history is the bulk of the daemon's heap. What the
 * filters look at is kept beside it. */
struct history_entry {
        char *text; /* one block: the text, then kind, peer_id and peer, each ending in NUL */
        size_t len;
        const char *kind;
        const char *peer_id;
        const char *peer; /* NULL when the result has none */
        bool is_deferred;
};

struct history {
        struct event_base *base;
        struct store *store;
        size_t limit;
        struct history_entry *entries; /* oldest first */
        size_t n_entries;
        size_t entries_size;
        json_object *baselines; /* baseline key -> { "samples": [...], "value": median once learned } */
        struct event *save_timer;
};

static const char *str(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

static void entry_clear(struct history_entry *e)
{
        free(e->text);
}

static void history_trim(struct history *h)
{
        size_t drop;

        if (h->n_entries <= h->limit)
                return;
        drop = h->n_entries - h->limit;
        for (size_t i = 0; i < drop; i++)
                entry_clear(&h->entries[i]);
        memmove(h->entries, h->entries + drop, (h->n_entries - drop) * sizeof(*h->entries));
        h->n_entries -= drop;
}

static int entry_add(struct history *h, const char *text, size_t len, const char *kind, const char *peer_id,
                     const char *peer, bool is_deferred)
{
        size_t kind_len = strlen(kind) + 1, id_len = strlen(peer_id) + 1,
               peer_len = peer ? strlen(peer) + 1 : 0;
        struct history_entry *e;
        char *block;

        if (h->n_entries == h->entries_size) {
                size_t size = h->entries_size ? h->entries_size * 2 : 16;
                struct history_entry *v = realloc(h->entries, size * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                h->entries = v;
                h->entries_size = size;
        }
        block = malloc(len + 1 + kind_len + id_len + peer_len);
        if (!block)
                return -ENOMEM;
        e = &h->entries[h->n_entries++];
        *e = (struct history_entry){ .text = block, .len = len, .is_deferred = is_deferred };
        memcpy(block, text, len);
        block[len] = '\0';
        e->kind = memcpy(block + len + 1, kind, kind_len);
        e->peer_id = memcpy(block + len + 1 + kind_len, peer_id, id_len);
        e->peer = peer ? memcpy(block + len + 1 + kind_len + id_len, peer, peer_len) : NULL;
        return 0;
}

static bool is_deferred(const char *status)
{
        return status && strcmp(status, "deferred") == 0;
}

/* Keeps result as its text, serialised as the API prints it; history.json escapes its slashes
 * besides. Both stay byte for byte what they were when the trees were kept. */
static int history_append(struct history *h, json_object *result)
{
        const char *kind = str(result, "kind"), *peer_id = str(result, "peer_id");
        const char *text;
        size_t len;

        if (!kind || !peer_id)
                return -EINVAL;
        text = json_object_to_json_string_length(
                result, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
        if (!text)
                return -ENOMEM;
        return entry_add(h, text, len, kind, peer_id, str(result, "peer"),
                         is_deferred(str(result, "status")));
}

/* The text was made by json-c from a valid tree: parsing it back cannot fail but for memory. */
static json_object *entry_parse(const struct history_entry *e)
{
        return json_tokener_parse(e->text);
}

/* history.json as json-c would print { "version", "results", "baselines" } with the results as
 * trees, put together from the texts without parsing them. */
static char *history_to_text(struct history *h, size_t *len)
{
        char *text = NULL;
        FILE *out = open_memstream(&text, len);

        if (!out)
                return NULL;
        fprintf(out, "{\"version\":%d,\"results\":[", HISTORY_VERSION);
        for (size_t i = 0; i < h->n_entries; i++) {
                const char *t = h->entries[i].text, *slash;

                if (i > 0)
                        fputc(',', out);
                /* Outside strings JSON has no "/": escaping every one is what json-c does to them
                 * without JSON_C_TO_STRING_NOSLASHESCAPE. */
                for (; (slash = strchr(t, '/')); t = slash + 1) {
                        fwrite(t, 1, (size_t)(slash - t), out);
                        fputs("\\/", out);
                }
                fputs(t, out);
        }
        fprintf(out, "],\"baselines\":%s}",
                json_object_to_json_string_ext(h->baselines, JSON_C_TO_STRING_PLAIN));
        if (fclose(out) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

static void history_save(struct history *h)
{
        _cleanup_free_ char *s = NULL;
        size_t len = 0;
        int r, was;

        if (!h->store)
                return;
        s = history_to_text(h, &len);
        was = store_last_save(h->store, HISTORY_FILE);
        r = s ? store_write(h->store, HISTORY_FILE, s, len) : -ENOMEM;
        /* Every result saves: a full disk is told once, and again when saving works again. */
        if (r < 0 && was == 0)
                log_warning("cannot save the probe history to %s/%s: %s; tried again at every result",
                            store_path(h->store), HISTORY_FILE, strerror(-r));
        else if (r == 0 && was < 0)
                log_notice("probe history saved to %s/%s again", store_path(h->store), HISTORY_FILE);
}

static void on_save(evutil_socket_t fd, short what, void *userdata)
{
        history_save(userdata);
}

static bool baseline_is_valid(json_object *b)
{
        json_object *samples, *value;

        if (!json_object_is_type(b, json_type_object) ||
            !json_object_object_get_ex(b, "samples", &samples) ||
            !json_object_is_type(samples, json_type_array) ||
            json_object_array_length(samples) > HISTORY_BASELINE_SAMPLES)
                return false;
        for (size_t i = 0; i < json_object_array_length(samples); i++) {
                json_object *v = json_object_array_get_idx(samples, i);

                if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                        return false;
        }
        return !json_object_object_get_ex(b, "value", &value) ||
               json_object_is_type(value, json_type_double) || json_object_is_type(value, json_type_int);
}

static bool result_is_valid(json_object *e)
{
        return json_object_is_type(e, json_type_object) && str(e, "kind") && str(e, "peer_id");
}

/* The file's results from first to n, each as "FLAGS kind NUL peer_id NUL peer NUL text NUL"
 * (FLAGS: 'd' or '-' for deferred, 'p' or '-' for a peer name) in one buffer of its own: the
 * entries are made from it once the file's tree is freed, into the heap the tree leaves, so the
 * heap can shrink back instead of keeping the texts above the tree's emptied space. */
static char *stage_results(json_object *results, size_t first, size_t n, size_t *len)
{
        char *buf = NULL;
        FILE *f = open_memstream(&buf, len);

        if (!f)
                return NULL;
        for (size_t i = first; i < n; i++) {
                json_object *e = json_object_array_get_idx(results, i);
                const char *peer = str(e, "peer");

                if (!result_is_valid(e))
                        continue;
                fputc(is_deferred(str(e, "status")) ? 'd' : '-', f);
                fputc(peer ? 'p' : '-', f);
                fprintf(f, "%s%c%s%c%s%c%s%c", str(e, "kind"), 0, str(e, "peer_id"), 0, peer ? peer : "", 0,
                        json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN |
                                                                  JSON_C_TO_STRING_NOSLASHESCAPE),
                        0);
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

static void add_staged(struct history *h, const char *buf, size_t len)
{
        for (const char *p = buf; p < buf + len;) {
                const char *kind = p + 2, *peer_id = kind + strlen(kind) + 1,
                           *peer = peer_id + strlen(peer_id) + 1, *text = peer + strlen(peer) + 1;
                size_t text_len = strlen(text);

                if (entry_add(h, text, text_len, kind, peer_id, p[1] == 'p' ? peer : NULL, p[0] == 'd') < 0)
                        return;
                p = text + text_len + 1;
        }
}

static void history_load(struct history *h)
{
        _cleanup_free_ char *data = NULL, *staged = NULL;
        json_object *root = NULL, *results, *version, *baselines;
        size_t len, n, first, staged_len = 0;
        int r;

        if (!h->store)
                return;
        r = store_read(h->store, HISTORY_FILE, HISTORY_MAX_SIZE, &data, &len);
        if (r == -ENOENT)
                return;
        if (r == 0)
                root = json_tokener_parse(data);
        if (r < 0 || !root || strlen(data) != len || !json_object_object_get_ex(root, "version", &version) ||
            json_object_get_int(version) < 1 || json_object_get_int(version) > HISTORY_VERSION ||
            !json_object_object_get_ex(root, "results", &results) ||
            !json_object_is_type(results, json_type_array)) {
                struct log_field f[] = { { "file", HISTORY_FILE } };

                json_object_put(root);
                r = store_quarantine(h->store, HISTORY_FILE);
                event_emit(EVENT_STATE_QUARANTINED, f, ARRAY_SIZE(f),
                           "state file %s/%s is damaged; moved aside to %s.corrupt%s; the probe history "
                           "starts empty",
                           store_path(h->store), HISTORY_FILE, HISTORY_FILE, r < 0 ? " (failed)" : "");
                return;
        }
        /* Only the newest `limit` valid ones are kept: older ones are not made into text to be
         * dropped. */
        first = n = json_object_array_length(results);
        for (size_t valid = 0; first > 0 && valid < h->limit; first--)
                valid += result_is_valid(json_object_array_get_idx(results, first - 1));
        staged = stage_results(results, first, n, &staged_len);
        if (!staged)
                log_warning("out of memory reading %s/%s: the probe history starts empty",
                            store_path(h->store), HISTORY_FILE);
        /* Version 1 kept no baselines: they are learned again from the next good results. */
        if (json_object_object_get_ex(root, "baselines", &baselines) &&
            json_object_is_type(baselines, json_type_object)) {
                json_object_object_foreach(baselines, key, b) {
                        if (json_object_object_length(h->baselines) >= HISTORY_BASELINES_MAX)
                                break;
                        if (baseline_is_valid(b))
                                json_object_object_add(h->baselines, key, json_object_get(b));
                }
        }
        json_object_put(root);
        if (staged)
                add_staged(h, staged, staged_len);
        /* The parsed file was many times the size of what is kept of it: its freed pages go back
         * now instead of staying in the daemon's resident memory for good. */
        heap_trim_soon();
}

int history_new(struct event_base *base, struct store *store, size_t limit, struct history **ret)
{
        struct history *h = calloc(1, sizeof(*h));

        if (!h)
                return -ENOMEM;
        h->base = base;
        h->store = store;
        h->limit = limit ? limit : 1;
        h->baselines = json_object_new_object();
        h->save_timer = evtimer_new(base, on_save, h);
        if (!h->baselines || !h->save_timer) {
                history_free(h);
                return -ENOMEM;
        }
        history_load(h);
        *ret = h;
        return 0;
}

void history_free(struct history *h)
{
        if (!h)
                return;
        if (h->save_timer && evtimer_pending(h->save_timer, NULL))
                history_save(h);
        if (h->save_timer)
                event_free(h->save_timer);
        for (size_t i = 0; i < h->n_entries; i++)
                entry_clear(&h->entries[i]);
        free(h->entries);
        json_object_put(h->baselines);
        free(h);
}

void history_set_limit(struct history *h, size_t limit)
{
        h->limit = limit ? limit : 1;
        history_trim(h);
}

static void history_schedule_save(struct history *h)
{
        struct timeval tv = { .tv_sec = 1 };

        if (h->store && !evtimer_pending(h->save_timer, NULL))
                evtimer_add(h->save_timer, &tv);
}

void history_add(struct history *h, json_object *result)
{
        int r = history_append(h, result);

        if (r < 0)
                log_warning("probe result not kept in the history: %s",
                            r == -EINVAL ? "no kind or peer_id" : strerror(-r));
        history_trim(h);
        history_schedule_save(h);
}

static bool matches(const struct history_entry *e, const char *peer, const char *kind)
{
        if (kind && strcmp(e->kind, kind) != 0)
                return false;
        if (!peer)
                return true;
        return (e->peer && strcmp(e->peer, peer) == 0) ||
               (strncmp(e->peer_id, peer, strlen(peer)) == 0 && strlen(peer) >= 4);
}

json_object *history_query(struct history *h, const char *peer, const char *kind, size_t limit)
{
        json_object *out = json_object_new_array();

        for (size_t i = h->n_entries; i > 0 && (!limit || json_object_array_length(out) < limit); i--) {
                const struct history_entry *e = &h->entries[i - 1];
                json_object *o;

                if (matches(e, peer, kind) && (o = entry_parse(e)))
                        json_object_array_add(out, o);
        }
        return out;
}

json_object *history_query_printed(struct history *h, const char *peer, const char *kind, size_t limit)
{
        json_object *out;
        size_t n = 0, len;
        char *text = NULL;
        FILE *f = open_memstream(&text, &len);

        if (!f)
                return NULL;
        fputc('[', f);
        for (size_t i = h->n_entries; i > 0 && (!limit || n < limit); i--) {
                const struct history_entry *e = &h->entries[i - 1];

                if (!matches(e, peer, kind))
                        continue;
                if (n++ > 0)
                        fputc(',', f);
                fwrite(e->text, 1, e->len, f);
        }
        fputc(']', f);
        out = fclose(f) == 0 ? json_object_new_array() : NULL;
        if (!out) {
                free(text);
                return NULL;
        }
        json_object_set_serializer(out, json_object_userdata_to_json_string, text,
                                   json_object_free_userdata);
        return out;
}

static int compare_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

static int compare_keys(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* peer id, kind, metric and every parameter, keys sorted: a result measured with other
 * parameters (more streams, a longer run) is judged against its own baseline. */
static char *baseline_key(const char *peer_id, const char *kind, json_object *params, const char *metric)
{
        const char *keys[64];
        size_t n = 0, size = 0;
        char *text = NULL;
        FILE *out = open_memstream(&text, &size);

        if (!out)
                return NULL;
        if (json_object_is_type(params, json_type_object)) {
                json_object_object_foreach(params, name, ignored) {
                        (void)ignored;
                        if (n < ARRAY_SIZE(keys))
                                keys[n++] = name;
                }
        }
        qsort(keys, n, sizeof(keys[0]), compare_keys);
        fprintf(out, "%s/%s/%s", peer_id, kind, metric);
        for (size_t i = 0; i < n; i++) {
                json_object *v = NULL;

                json_object_object_get_ex(params, keys[i], &v);
                fprintf(out, "/%s=%s", keys[i], json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
        }
        if (fclose(out) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

double history_baseline(struct history *h, const char *peer_id, const char *kind, json_object *params,
                        const char *metric)
{
        _cleanup_free_ char *key = baseline_key(peer_id, kind, params, metric);
        json_object *b, *value;

        if (!key || !json_object_object_get_ex(h->baselines, key, &b) ||
            !json_object_object_get_ex(b, "value", &value))
                return 0;
        return json_object_get_double(value);
}

void history_learn(struct history *h, const char *peer_id, const char *kind, json_object *params,
                   const char *metric, double value)
{
        _cleanup_free_ char *key = baseline_key(peer_id, kind, params, metric);
        double sorted[HISTORY_BASELINE_SAMPLES];
        json_object *b, *samples;
        size_t n;

        if (!key)
                return;
        if (!json_object_object_get_ex(h->baselines, key, &b)) {
                /* Bounded: ad-hoc parameters must not grow the state without end; the oldest
                 * baseline goes first. */
                if (json_object_object_length(h->baselines) >= HISTORY_BASELINES_MAX) {
                        struct json_object_iterator first = json_object_iter_begin(h->baselines);

                        json_object_object_del(h->baselines, json_object_iter_peek_name(&first));
                }
                b = json_object_new_object();
                json_object_object_add(b, "samples", json_object_new_array());
                json_object_object_add(h->baselines, key, b);
        }
        /* The first good results define normal; later ones are judged against them, never folded
         * in, so a slow decline cannot drag the baseline down with it. */
        if (json_object_object_get_ex(b, "value", NULL) ||
            !json_object_object_get_ex(b, "samples", &samples))
                return;
        json_object_array_add(samples, json_object_new_double(value));
        n = json_object_array_length(samples);
        if (n >= HISTORY_BASELINE_SAMPLES) {
                for (size_t i = 0; i < HISTORY_BASELINE_SAMPLES; i++)
                        sorted[i] = json_object_get_double(json_object_array_get_idx(samples, i));
                qsort(sorted, HISTORY_BASELINE_SAMPLES, sizeof(double), compare_double);
                json_object_object_add(b, "value",
                                       json_object_new_double(sorted[HISTORY_BASELINE_SAMPLES / 2]));
        }
        history_schedule_save(h);
}

json_object *history_latest(struct history *h)
{
        json_object *out = json_object_new_array();
        _cleanup_free_ const struct history_entry **kept = calloc(h->n_entries + 1, sizeof(*kept));
        size_t n_kept = 0;

        if (!kept)
                return out;
        for (size_t i = h->n_entries; i > 0; i--) {
                const struct history_entry *e = &h->entries[i - 1];
                bool seen = e->is_deferred; /* not a measurement */
                json_object *o;

                for (size_t k = 0; k < n_kept && !seen; k++)
                        seen = strcmp(kept[k]->peer_id, e->peer_id) == 0 &&
                               strcmp(kept[k]->kind, e->kind) == 0;
                if (seen || !(o = entry_parse(e)))
                        continue;
                kept[n_kept++] = e;
                json_object_array_add(out, o);
        }
        return out;
}
