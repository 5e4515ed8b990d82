#include "history.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baselines.h"
#include "common/json_scan.h"
#include "common/macro.h"
#include "daemon/base/clock.h"
#include "daemon/base/event.h"
#include "daemon/base/log.h"
#include "history_entries.h"

#define HISTORY_FILE     "history.json"
#define HISTORY_MAX_SIZE (64 * 1024 * 1024)
#define HISTORY_VERSION  2

struct history {
        struct event_base *base;
        struct store *store;
        size_t limit;
        struct history_entries entries;
        json_object *baselines; /* baseline key -> { "samples": [...], "value": median once learned } */
        struct event *save_timer;
        int64_t saved_usec; /* when the last save ended (CLOCK_MONOTONIC); 0: none yet */
        uint64_t generation;
};

/* A save rewrites the whole file (some 800 KiB at 1,000 results) and waits for the disk, on the
 * loop. The first result after a quiet spell is saved within HISTORY_SAVE_DELAY_USEC; a burst (an
 * rtt round brings one result every few seconds for minutes) at most every HISTORY_SAVE_GAP_USEC,
 * not once a result. A stop saves what is pending; a crash loses at most one gap's results. */
#define HISTORY_SAVE_DELAY_USEC 1000000
#define HISTORY_SAVE_GAP_USEC   10000000

/* One count for every history of the process: a reader that kept what it derived from one
 * history cannot take another's generation for it. */
static uint64_t generations;

static const char *str(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

static void history_trim(struct history *h)
{
        if (h->entries.n > h->limit) {
                history_entries_drop_oldest(&h->entries, h->entries.n - h->limit);
                h->generation = ++generations;
        }
}

static json_object *entry_parse(const struct history *h, const struct history_entry *e)
{
        _cleanup_free_ char *text = history_entry_read(&h->entries, e);

        return text ? json_tokener_parse(text) : NULL;
}

/* JSON text with its "\/" as "/": what json-c prints with JSON_C_TO_STRING_NOSLASHESCAPE. A
 * backslash in a string is itself escaped, so every "\" starts a pair of characters. */
static size_t unescape_slashes(char *text, size_t len)
{
        size_t out = 0;

        for (size_t i = 0; i < len; i++) {
                if (text[i] == '\\' && i + 1 < len) {
                        if (text[i + 1] != '/')
                                text[out++] = text[i];
                        i++;
                }
                text[out++] = text[i];
        }
        return out;
}

static bool is_deferred(const char *status)
{
        return status && strcmp(status, "deferred") == 0;
}

static int history_append(struct history *h, json_object *result)
{
        const char *kind = str(result, "kind"), *peer_id = str(result, "peer_id");
        const char *text;
        size_t len;

        if (!kind || !peer_id)
                return -EINVAL;
        text = json_object_to_json_string_length(result, JSON_C_TO_STRING_PLAIN, &len);
        if (!text)
                return -ENOMEM;
        return history_entries_add(&h->entries, text, 0, len, kind, peer_id, str(result, "peer"),
                                   is_deferred(str(result, "status")));
}

struct history_writer {
        struct history *h;
        off_t *offsets; /* where each entry lands in the new file */
        off_t size;     /* of the new file */
};

/* history.json as json-c prints { "version", "results", "baselines" } with the results as trees. */
static int write_history(FILE *out, void *userdata)
{
        struct history_writer *w = userdata;
        struct history *h = w->h;
        int header, r;

        header = fprintf(out, "{\"version\":%d,\"results\":[", HISTORY_VERSION);
        if (header < 0)
                return -EIO;
        r = history_entries_write(&h->entries, out, header, w->offsets);
        if (r < 0)
                return r;
        fprintf(out, "],\"baselines\":%s}",
                json_object_to_json_string_ext(h->baselines, JSON_C_TO_STRING_PLAIN));
        w->size = ftello(out);
        return 0;
}

/* Writes history.json and, once it is there, reads saved entries from it: their texts leave
 * memory. Should the new file not open, the old one (still open, though replaced) keeps serving. */
static int history_write(struct history *h)
{
        _cleanup_free_ off_t *offsets = calloc(h->entries.n + 1, sizeof(*offsets));
        struct history_writer w = { .h = h, .offsets = offsets };
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (!offsets)
                return -ENOMEM;
        r = store_write_with(h->store, HISTORY_FILE, write_history, &w);
        if (r < 0)
                return r;
        /* Not the file just written (replaced since by someone else): the texts stay in memory. */
        if (store_open_file(h->store, HISTORY_FILE, &fd, &st) < 0 || st.st_size != w.size)
                return 0;
        history_entries_use_file(&h->entries, fd, offsets);
        fd = -EBADF;
        return 0;
}

static void history_save(struct history *h)
{
        int r, was;

        if (!h->store)
                return;
        was = store_last_save(h->store, HISTORY_FILE);
        r = history_write(h);
        h->saved_usec = (int64_t)clock_monotonic_usec();
        /* Saves come again with the next results: a full disk is told once, and again when saving
         * works again. */
        if (r < 0 && was == 0)
                log_warning("cannot save the probe history to %s/%s: %s; tried again with the next results",
                            store_path(h->store), HISTORY_FILE, strerror(-r));
        else if (r == 0 && was < 0)
                log_notice("probe history saved to %s/%s again", store_path(h->store), HISTORY_FILE);
}

static void history_schedule_save(struct history *h)
{
        int64_t now = (int64_t)clock_monotonic_usec(), due = now + HISTORY_SAVE_DELAY_USEC;
        struct timeval tv;

        if (!h->store || evtimer_pending(h->save_timer, NULL))
                return;
        if (h->saved_usec && h->saved_usec + HISTORY_SAVE_GAP_USEC > due)
                due = h->saved_usec + HISTORY_SAVE_GAP_USEC;
        tv = (struct timeval){ .tv_sec = (time_t)((due - now) / 1000000),
                               .tv_usec = (suseconds_t)((due - now) % 1000000) };
        evtimer_add(h->save_timer, &tv);
}

static void on_save(evutil_socket_t fd, short what, void *userdata)
{
        history_save(userdata);
}

/* One element of the file's results: kept when it is a result. One that reads back as json-c
 * prints it stays in the file; any other (an older writer's) is kept as json-c prints it, to be
 * saved so. */
static int load_result(struct history *h, const char *data, struct json_scan_span span, bool *is_changed)
{
        json_object *e = json_scan_parse(data, span);
        const char *kind = str(e, "kind"), *peer_id = str(e, "peer_id"), *text;
        size_t len;
        int r = 0;

        if (!e)
                return -EBADMSG;
        if (json_object_is_type(e, json_type_object) && kind && peer_id) {
                text = json_object_to_json_string_length(e, JSON_C_TO_STRING_PLAIN, &len);
                if (!text)
                        r = -ENOMEM;
                else if (len == span.len && memcmp(text, data + span.start, len) == 0)
                        r = history_entries_add(&h->entries, NULL, (off_t)span.start, len, kind, peer_id,
                                                str(e, "peer"), is_deferred(str(e, "status")));
                else {
                        r = history_entries_add(&h->entries, text, 0, len, kind, peer_id, str(e, "peer"),
                                                is_deferred(str(e, "status")));
                        *is_changed = true;
                }
        }
        json_object_put(e);
        /* Only the newest `limit` are kept: older ones go as they are passed. */
        if (h->entries.n >= 2 * h->limit)
                history_trim(h);
        return r;
}

/* history.json read piece by piece: its results one at a time, never the whole file as one
 * tree (ten times its size at once, and a heap left that large). */
static int load_file(struct history *h, const char *data, size_t len, bool *is_changed)
{
        struct json_scan_span key, value, version = {}, results = {}, baselines = {};
        struct json_scan_list top, list;
        json_object *v;
        int r, n;

        r = json_scan_open(&top, data, len, 0, '{');
        while (r == 0 && (n = json_scan_member(&top, &key, &value)) != 0) {
                if (n < 0)
                        return n;
                if (json_scan_key_is(data, key, "version"))
                        version = value;
                else if (json_scan_key_is(data, key, "results"))
                        results = value;
                else if (json_scan_key_is(data, key, "baselines"))
                        baselines = value;
        }
        if (r < 0 || !json_scan_at_end(data, len, top.pos) || version.len == 0 || results.len == 0)
                return -EBADMSG;
        v = json_scan_parse(data, version);
        n = json_object_is_type(v, json_type_int) ? json_object_get_int(v) : 0;
        json_object_put(v);
        if (n < 1 || n > HISTORY_VERSION)
                return -EBADMSG;
        r = json_scan_open(&list, data, len, results.start, '[');
        while (r == 0 && (n = json_scan_element(&list, &value)) != 0)
                r = n < 0 ? n : load_result(h, data, value, is_changed);
        if (r < 0)
                return r;
        history_trim(h);
        /* Version 1 kept no baselines: they are learned again from the next good results. */
        if (baselines.len > 0) {
                v = json_scan_parse(data, baselines);
                if (!v)
                        return -EBADMSG;
                baselines_load(h->baselines, v);
                json_object_put(v);
        }
        return 0;
}

static void history_load(struct history *h)
{
        _cleanup_close_ int fd = -EBADF;
        bool is_changed = false;
        struct stat st;
        void *data = MAP_FAILED;
        int r;

        if (!h->store)
                return;
        r = store_open_file(h->store, HISTORY_FILE, &fd, &st);
        if (r == -ENOENT)
                return;
        if (r == 0 && (st.st_size == 0 || st.st_size > HISTORY_MAX_SIZE))
                r = -EBADMSG;
        /* Mapped, not read: the file's pages are the kernel's cache, not the daemon's heap. */
        if (r == 0 && (data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)
                r = -errno;
        if (r == 0)
                r = load_file(h, data, (size_t)st.st_size, &is_changed);
        if (data != MAP_FAILED)
                munmap(data, (size_t)st.st_size);
        if (r == -ENOMEM) {
                log_warning("out of memory reading %s/%s: the probe history starts empty",
                            store_path(h->store), HISTORY_FILE);
        } else if (r < 0) {
                struct log_field f[] = { { "file", HISTORY_FILE } };
                int moved = store_quarantine(h->store, HISTORY_FILE);

                event_emit(EVENT_STATE_QUARANTINED, f, ARRAY_SIZE(f),
                           "state file %s/%s is damaged; moved aside to %s.corrupt%s; the probe history "
                           "starts empty",
                           store_path(h->store), HISTORY_FILE, HISTORY_FILE, moved < 0 ? " (failed)" : "");
        }
        /* Nothing of a file that fails anywhere is kept, not even the results before the damage. */
        if (r < 0) {
                history_entries_clear(&h->entries);
                json_object_put(h->baselines);
                h->baselines = json_object_new_object();
                return;
        }
        h->entries.fd = fd;
        fd = -EBADF;
        if (is_changed)
                history_schedule_save(h);
}

int history_new(struct event_base *base, struct store *store, size_t limit, struct history **ret)
{
        struct history *h = calloc(1, sizeof(*h));

        if (!h)
                return -ENOMEM;
        h->base = base;
        h->store = store;
        h->limit = limit ? limit : 1;
        h->generation = ++generations;
        h->entries = (struct history_entries)HISTORY_ENTRIES_INIT;
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
        history_entries_clear(&h->entries);
        json_object_put(h->baselines);
        free(h);
}

void history_set_limit(struct history *h, size_t limit)
{
        h->limit = limit ? limit : 1;
        history_trim(h);
}

void history_add(struct history *h, json_object *result)
{
        int r = history_append(h, result);

        h->generation = ++generations;
        if (r < 0)
                log_warning("probe result not kept in the history: %s",
                            r == -EINVAL ? "no kind or peer_id" : strerror(-r));
        history_trim(h);
        history_schedule_save(h);
}

uint64_t history_generation(const struct history *h)
{
        return h->generation;
}

static bool matches(const struct history_entry *e, const char *peer, const char *kind)
{
        if (kind && strcmp(history_entry_kind(e), kind) != 0)
                return false;
        if (!peer)
                return true;
        return (history_entry_peer(e) && strcmp(history_entry_peer(e), peer) == 0) ||
               (strncmp(history_entry_peer_id(e), peer, strlen(peer)) == 0 && strlen(peer) >= 4);
}

json_object *history_query(struct history *h, const char *peer, const char *kind, size_t limit)
{
        json_object *out = json_object_new_array();

        for (size_t i = h->entries.n; i > 0 && (!limit || json_object_array_length(out) < limit); i--) {
                const struct history_entry *e = &h->entries.v[i - 1];
                json_object *o;

                if (matches(e, peer, kind) && (o = entry_parse(h, e)))
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
        for (size_t i = h->entries.n; i > 0 && (!limit || n < limit); i--) {
                const struct history_entry *e = &h->entries.v[i - 1];
                _cleanup_free_ char *one = NULL;

                if (!matches(e, peer, kind) || !(one = history_entry_read(&h->entries, e)))
                        continue;
                if (n++ > 0)
                        fputc(',', f);
                fwrite(one, 1, unescape_slashes(one, e->len), f);
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

double history_baseline(struct history *h, const char *peer_id, const char *kind, json_object *params,
                        const char *metric)
{
        return baselines_value(h->baselines, peer_id, kind, params, metric);
}

void history_learn(struct history *h, const char *peer_id, const char *kind, json_object *params,
                   const char *metric, double value)
{
        if (baselines_learn(h->baselines, peer_id, kind, params, metric, value))
                history_schedule_save(h);
}

json_object *history_latest(struct history *h)
{
        json_object *out = json_object_new_array();
        _cleanup_free_ const struct history_entry **kept = calloc(h->entries.n + 1, sizeof(*kept));
        size_t n_kept = 0;

        if (!kept)
                return out;
        for (size_t i = h->entries.n; i > 0; i--) {
                const struct history_entry *e = &h->entries.v[i - 1];
                bool seen = e->is_deferred; /* not a measurement */
                json_object *o;

                for (size_t k = 0; k < n_kept && !seen; k++)
                        seen = strcmp(history_entry_peer_id(kept[k]), history_entry_peer_id(e)) == 0 &&
                               strcmp(history_entry_kind(kept[k]), history_entry_kind(e)) == 0;
                if (seen || !(o = entry_parse(h, e)))
                        continue;
                kept[n_kept++] = e;
                json_object_array_add(out, o);
        }
        return out;
}
