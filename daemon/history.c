#include "history.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "log.h"
#include "macro.h"

#define HISTORY_FILE     "history.json"
#define HISTORY_MAX_SIZE (64 * 1024 * 1024)

struct history {
        struct event_base *base;
        struct store *store;
        size_t limit;
        json_object *results; /* array, oldest first */
        struct event *save_timer;
};

static const char *str(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

static void history_trim(struct history *h)
{
        size_t n = json_object_array_length(h->results);

        if (n > h->limit)
                json_object_array_del_idx(h->results, 0, n - h->limit);
}

static void history_save(struct history *h)
{
        json_object *root;
        const char *s;
        size_t len;
        int r;

        if (!h->store)
                return;
        root = json_object_new_object();
        json_object_object_add(root, "version", json_object_new_int(1));
        json_object_object_add(root, "results", json_object_get(h->results));
        s = json_object_to_json_string_length(root, JSON_C_TO_STRING_PLAIN, &len);
        r = store_write(h->store, HISTORY_FILE, s, len);
        if (r < 0)
                log_warning("cannot save the probe history in %s: %s", store_path(h->store), strerror(-r));
        json_object_put(root);
}

static void on_save(evutil_socket_t fd, short what, void *userdata)
{
        history_save(userdata);
}

static void history_load(struct history *h)
{
        _cleanup_free_ char *data = NULL;
        json_object *root = NULL, *results, *version;
        size_t len;
        int r;

        if (!h->store)
                return;
        r = store_read(h->store, HISTORY_FILE, HISTORY_MAX_SIZE, &data, &len);
        if (r == -ENOENT)
                return;
        if (r == 0)
                root = json_tokener_parse(data);
        if (r < 0 || !root || strlen(data) != len || !json_object_object_get_ex(root, "version", &version) ||
            json_object_get_int(version) != 1 || !json_object_object_get_ex(root, "results", &results) ||
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
        for (size_t i = 0; i < json_object_array_length(results); i++) {
                json_object *e = json_object_array_get_idx(results, i);

                if (json_object_is_type(e, json_type_object) && str(e, "kind") && str(e, "peer_id"))
                        json_object_array_add(h->results, json_object_get(e));
        }
        json_object_put(root);
        history_trim(h);
}

int history_new(struct event_base *base, struct store *store, size_t limit, struct history **ret)
{
        struct history *h = calloc(1, sizeof(*h));

        if (!h)
                return -ENOMEM;
        h->base = base;
        h->store = store;
        h->limit = limit ? limit : 1;
        h->results = json_object_new_array();
        h->save_timer = evtimer_new(base, on_save, h);
        if (!h->results || !h->save_timer) {
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
        json_object_put(h->results);
        free(h);
}

void history_set_limit(struct history *h, size_t limit)
{
        h->limit = limit ? limit : 1;
        history_trim(h);
}

void history_add(struct history *h, json_object *result)
{
        struct timeval tv = { .tv_sec = 1 };

        json_object_array_add(h->results, json_object_get(result));
        history_trim(h);
        if (h->store && !evtimer_pending(h->save_timer, NULL))
                evtimer_add(h->save_timer, &tv);
}

static bool matches(json_object *e, const char *peer, const char *kind)
{
        const char *k = str(e, "kind"), *id = str(e, "peer_id"), *name = str(e, "peer");

        if (kind && (!k || strcmp(k, kind) != 0))
                return false;
        if (!peer)
                return true;
        return (name && strcmp(name, peer) == 0) ||
               (id && strncmp(id, peer, strlen(peer)) == 0 && strlen(peer) >= 4);
}

json_object *history_query(struct history *h, const char *peer, const char *kind, size_t limit)
{
        json_object *out = json_object_new_array();
        size_t n = json_object_array_length(h->results);

        for (size_t i = n; i > 0 && (!limit || json_object_array_length(out) < limit); i--) {
                json_object *e = json_object_array_get_idx(h->results, i - 1);

                if (matches(e, peer, kind))
                        json_object_array_add(out, json_object_get(e));
        }
        return out;
}

static int compare_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

double history_baseline(struct history *h, const char *peer_id, const char *kind, const char *metric)
{
        double samples[HISTORY_BASELINE_SAMPLES];
        size_t n = 0;

        /* The first good results define normal; later ones are judged against them, not folded
         * in, so a slow decline cannot drag the baseline down with it. */
        for (size_t i = 0; i < json_object_array_length(h->results) && n < HISTORY_BASELINE_SAMPLES; i++) {
                json_object *e = json_object_array_get_idx(h->results, i), *ok, *measured, *v;

                if (!str(e, "peer_id") || strcmp(str(e, "peer_id"), peer_id) != 0 || !str(e, "kind") ||
                    strcmp(str(e, "kind"), kind) != 0 || !json_object_object_get_ex(e, "ok", &ok) ||
                    !json_object_get_boolean(ok) || !json_object_object_get_ex(e, "measured", &measured) ||
                    !json_object_object_get_ex(measured, metric, &v))
                        continue;
                samples[n++] = json_object_get_double(v);
        }
        if (n < HISTORY_BASELINE_SAMPLES)
                return 0;
        qsort(samples, n, sizeof(double), compare_double);
        return samples[n / 2];
}

json_object *history_latest(struct history *h)
{
        json_object *out = json_object_new_array();
        size_t n = json_object_array_length(h->results);

        for (size_t i = n; i > 0; i--) {
                json_object *e = json_object_array_get_idx(h->results, i - 1);
                bool seen = false;

                for (size_t k = 0; k < json_object_array_length(out) && !seen; k++) {
                        json_object *o = json_object_array_get_idx(out, k);

                        seen = strcmp(str(o, "peer_id"), str(e, "peer_id")) == 0 &&
                               strcmp(str(o, "kind"), str(e, "kind")) == 0;
                }
                if (!seen)
                        json_object_array_add(out, json_object_get(e));
        }
        return out;
}
