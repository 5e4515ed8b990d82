#include <event2/event.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon/base/store.h"
#include "daemon/probe/history.h"
#include "heap.h"
#include "test.h"

static char dir[] = "/tmp/sparkd-test-history.XXXXXX";

static void remove_state(const char *name)
{
        char path[256];

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        unlink(path);
}

static bool state_exists(const char *name)
{
        char path[256];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        return stat(path, &st) == 0;
}

static json_object *params_of(int streams, int duration_s)
{
        json_object *p = json_object_new_object();

        json_object_object_add(p, "streams", json_object_new_int(streams));
        json_object_object_add(p, "duration_s", json_object_new_int(duration_s));
        return p;
}

static json_object *result_of(const char *peer_id, const char *kind, double gbps)
{
        json_object *r = json_object_new_object(), *m = json_object_new_object();

        json_object_object_add(r, "peer_id", json_object_new_string(peer_id));
        json_object_object_add(r, "peer", json_object_new_string("b"));
        json_object_object_add(r, "kind", json_object_new_string(kind));
        json_object_object_add(r, "ok", json_object_new_boolean(1));
        json_object_object_add(m, "gbps", json_object_new_double(gbps));
        json_object_object_add(r, "measured", m);
        return r;
}

/* history_add takes its own reference. */
static void add_result(struct history *h, const char *peer_id, const char *kind, double gbps)
{
        json_object *r = result_of(peer_id, kind, gbps);

        history_add(h, r);
        json_object_put(r);
}

static void test_baseline_is_the_median_of_the_first_three(void)
{
        struct event_base *base = event_base_new();
        struct history *h = NULL;
        json_object *p = params_of(4, 10);

        CHECK(history_new(base, NULL, 10, &h) == 0);
        history_learn(h, "n1", "tcp", p, "gbps", 90);
        history_learn(h, "n1", "tcp", p, "gbps", 30);
        CHECK(history_baseline(h, "n1", "tcp", p, "gbps") == 0);
        history_learn(h, "n1", "tcp", p, "gbps", 95);
        CHECK(history_baseline(h, "n1", "tcp", p, "gbps") == 90);
        /* Never moves once learned, however many results follow. */
        for (int i = 0; i < 20; i++)
                history_learn(h, "n1", "tcp", p, "gbps", 10);
        CHECK(history_baseline(h, "n1", "tcp", p, "gbps") == 90);
        history_free(h);
        json_object_put(p);
        event_base_free(base);
}

static void test_baseline_is_per_peer_kind_and_parameters(void)
{
        struct event_base *base = event_base_new();
        struct history *h = NULL;
        json_object *four = params_of(4, 10), *one = params_of(1, 10), *reordered = json_object_new_object();

        /* The same parameters in another key order are the same baseline. */
        json_object_object_add(reordered, "duration_s", json_object_new_int(10));
        json_object_object_add(reordered, "streams", json_object_new_int(4));
        CHECK(history_new(base, NULL, 10, &h) == 0);
        for (int i = 0; i < 3; i++) {
                history_learn(h, "n1", "tcp", four, "gbps", 80);
                history_learn(h, "n1", "tcp", one, "gbps", 20);
                history_learn(h, "n2", "tcp", four, "gbps", 40);
        }
        CHECK(history_baseline(h, "n1", "tcp", four, "gbps") == 80);
        CHECK(history_baseline(h, "n1", "tcp", reordered, "gbps") == 80);
        CHECK(history_baseline(h, "n1", "tcp", one, "gbps") == 20);
        CHECK(history_baseline(h, "n2", "tcp", four, "gbps") == 40);
        CHECK(history_baseline(h, "n1", "rdma", four, "gbps") == 0);
        CHECK(history_baseline(h, "n1", "tcp", four, "busbw") == 0);
        history_free(h);
        json_object_put(four);
        json_object_put(one);
        json_object_put(reordered);
        event_base_free(base);
}

static void test_baseline_survives_restart_and_trimmed_results(void)
{
        struct event_base *base = event_base_new();
        struct store *s = NULL;
        struct history *h = NULL;
        json_object *p = params_of(2, 5), *q;

        CHECK(store_open(dir, &s) == 0);
        if (!s)
                return;
        CHECK(history_new(base, s, 2, &h) == 0);
        for (int i = 0; i < 3; i++) {
                add_result(h, "n1", "tcp", 50 + i);
                history_learn(h, "n1", "tcp", p, "gbps", 50 + i);
        }
        /* The results that taught the baseline leave the bounded history; the baseline stays. */
        for (int i = 0; i < 5; i++)
                add_result(h, "n1", "tcp", 5);
        history_free(h); /* saves what is pending */
        h = NULL;
        CHECK(history_new(base, s, 2, &h) == 0);
        CHECK(history_baseline(h, "n1", "tcp", p, "gbps") == 51);
        q = history_query(h, NULL, NULL, 0);
        CHECK(json_object_array_length(q) == 2);
        json_object_put(q);
        history_free(h);
        store_close(s);
        json_object_put(p);
        event_base_free(base);
}

static void test_version_one_and_damaged_baselines_load(void)
{
        struct event_base *base = event_base_new();
        struct store *s = NULL;
        struct history *h = NULL;
        const char *v1 = "{\"version\":1,\"results\":[{\"peer_id\":\"n1\",\"peer\":\"b\",\"kind\":\"rtt\","
                         "\"ok\":true}]}";
        json_object *p = params_of(2, 5);
        const char *v2 = "{\"version\":2,\"results\":[],\"baselines\":{"
                         "\"n1/tcp/gbps/duration_s=5/streams=2\":{\"samples\":[1,2,3],\"value\":2},"
                         "\"bad\":{\"samples\":\"x\"},\"worse\":7}}";
        json_object *q;

        CHECK(store_open(dir, &s) == 0);
        if (!s)
                return;
        CHECK(store_write(s, "history.json", v1, strlen(v1)) == 0);
        CHECK(history_new(base, s, 10, &h) == 0);
        q = history_query(h, NULL, NULL, 0);
        CHECK(json_object_array_length(q) == 1);
        json_object_put(q);
        history_free(h);
        h = NULL;
        /* Entries that are not baselines are dropped one by one, not the whole file. */
        CHECK(store_write(s, "history.json", v2, strlen(v2)) == 0);
        CHECK(history_new(base, s, 10, &h) == 0);
        CHECK(history_baseline(h, "n1", "tcp", p, "gbps") == 2);
        history_free(h);
        json_object_put(p);
        store_close(s);
        event_base_free(base);
}

static void test_latest_is_one_per_node_and_kind(void)
{
        struct event_base *base = event_base_new();
        struct history *h = NULL;
        json_object *latest;

        CHECK(history_new(base, NULL, 10, &h) == 0);
        add_result(h, "n1", "tcp", 1);
        add_result(h, "n1", "tcp", 2);
        add_result(h, "n1", "rtt", 3);
        add_result(h, "n2", "tcp", 4);
        latest = history_latest(h);
        CHECK(json_object_array_length(latest) == 3);
        {
                json_object *first = json_object_array_get_idx(latest, 0), *m, *v;

                CHECK(json_object_object_get_ex(first, "measured", &m) &&
                      json_object_object_get_ex(m, "gbps", &v) && json_object_get_double(v) == 4);
        }
        json_object_put(latest);
        history_free(h);
        event_base_free(base);
}

/* What readers derive from the results (the newest per pair) may be kept while the generation
 * stays: it moves with every result kept and every one dropped, and only then. */
static void test_generation_moves_with_the_results(void)
{
        struct event_base *base = event_base_new();
        struct history *h = NULL;
        uint64_t g0, g1, g2;

        CHECK(history_new(base, NULL, 3, &h) == 0);
        g0 = history_generation(h);
        CHECK(g0 != 0);
        add_result(h, "n1", "tcp", 1);
        g1 = history_generation(h);
        CHECK(g1 != g0);
        json_object_put(history_latest(h));
        json_object_put(history_query(h, NULL, NULL, 0));
        history_set_limit(h, 3);
        CHECK(history_generation(h) == g1);
        add_result(h, "n1", "tcp", 2);
        add_result(h, "n1", "tcp", 3);
        g2 = history_generation(h);
        CHECK(g2 != g1);
        history_set_limit(h, 1);
        CHECK(history_generation(h) != g2);
        history_free(h);
        event_base_free(base);
}

/* A deferred scheduled probe measured nothing: the metrics keep showing the last measurement. */
static void test_latest_passes_over_deferred(void)
{
        struct event_base *base = event_base_new();
        struct history *h = NULL;
        json_object *latest, *deferred = result_of("n1", "tcp", 0), *m, *v;

        CHECK(history_new(base, NULL, 10, &h) == 0);
        add_result(h, "n1", "tcp", 7);
        json_object_object_del(deferred, "measured");
        json_object_object_add(deferred, "status", json_object_new_string("deferred"));
        history_add(h, deferred);
        json_object_put(deferred);
        latest = history_latest(h);
        CHECK(json_object_array_length(latest) == 1);
        CHECK(json_object_object_get_ex(json_object_array_get_idx(latest, 0), "measured", &m) &&
              json_object_object_get_ex(m, "gbps", &v) && json_object_get_double(v) == 7);
        json_object_put(latest);
        CHECK(json_object_array_length(latest = history_query(h, NULL, "tcp", 10)) == 2);
        json_object_put(latest);
        history_free(h);
        event_base_free(base);
}

/* Both queries print as the trees did, for the API (PLAIN | NOSLASHESCAPE); a filter and a limit
 * pick the same results from the printed one. */
static void check_queries_print_as(struct history *h, json_object *newest_first)
{
        const int flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
        json_object *q = history_query(h, NULL, NULL, 0), *printed = history_query_printed(h, NULL, NULL, 0);
        json_object *one = history_query(h, "b", "tcp", 1),
                    *one_printed = history_query_printed(h, "b", "tcp", 1);

        CHECK_STREQ(json_object_to_json_string_ext(q, flags),
                    json_object_to_json_string_ext(newest_first, flags));
        CHECK_STREQ(json_object_to_json_string_ext(printed, flags),
                    json_object_to_json_string_ext(newest_first, flags));
        CHECK(json_object_array_length(one) == 1);
        CHECK_STREQ(json_object_to_json_string_ext(one_printed, flags),
                    json_object_to_json_string_ext(one, flags));
        json_object_put(q);
        json_object_put(printed);
        json_object_put(one);
        json_object_put(one_printed);
}

/* Results are kept as text, but history.json and the query output are what json-c prints of the
 * results as trees, before and after a restart. */
static void test_saved_and_queried_as_the_trees_print(void)
{
        static const double values[] = { 0.1, 4, 1e300, -2.5e-7, 97.123456789 };
        struct event_base *base = event_base_new();
        json_object *trees = json_object_new_array(), *newest_first = json_object_new_array();
        json_object *root = json_object_new_object(), *p = params_of(2, 5);
        _cleanup_free_ char *saved = NULL, *again = NULL;
        struct history *h = NULL;
        struct store *s = NULL;
        const char *expected;
        size_t len;

        CHECK(store_open(dir, &s) == 0);
        if (!s)
                return;
        {
                char path[256];

                snprintf(path, sizeof(path), "%s/history.json", dir);
                unlink(path);
        }
        CHECK(history_new(base, s, 4, &h) == 0);
        for (size_t i = 0; i < ARRAY_SIZE(values); i++) {
                json_object *r = result_of(i % 2 ? "n1" : "n2/ü\"x", i % 3 ? "tcp" : "rtt", values[i]);

                history_add(h, r);
                if (i > 0)
                        json_object_array_add(trees, r);
                else
                        json_object_put(r);
        }
        for (int i = 0; i < 3; i++)
                history_learn(h, "n1", "tcp", p, "gbps", 0.3 * i);
        for (size_t i = json_object_array_length(trees); i > 0; i--)
                json_object_array_add(newest_first,
                                      json_object_get(json_object_array_get_idx(trees, i - 1)));
        check_queries_print_as(h, newest_first);
        history_free(h); /* saves what is pending */
        h = NULL;

        json_object_object_add(root, "version", json_object_new_int(2));
        json_object_object_add(root, "results", trees);
        json_object_object_add(root, "baselines", json_object_new_object());
        json_object_object_add(json_object_object_get(root, "baselines"),
                               "n1/tcp/gbps/duration_s=5/streams=2", json_object_new_object());
        {
                json_object *b = json_object_object_get(json_object_object_get(root, "baselines"),
                                                        "n1/tcp/gbps/duration_s=5/streams=2"),
                            *samples = json_object_new_array();

                for (int i = 0; i < 3; i++)
                        json_object_array_add(samples, json_object_new_double(0.3 * i));
                json_object_object_add(b, "samples", samples);
                json_object_object_add(b, "value", json_object_new_double(0.3));
        }
        expected = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
        CHECK(store_read(s, "history.json", 1 << 20, &saved, &len) == 0);
        CHECK_STREQ(saved, expected);

        /* Loaded, one result more, and saved again: the results parsed back print as before. */
        CHECK(history_new(base, s, 4, &h) == 0);
        check_queries_print_as(h, newest_first);
        {
                json_object *r = result_of("n3", "tcp", 1.0 / 3);

                history_add(h, r);
                json_object_array_del_idx(trees, 0, 1);
                json_object_array_add(trees, r);
        }
        history_free(h);
        expected = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
        CHECK(store_read(s, "history.json", 1 << 20, &again, &len) == 0);
        CHECK_STREQ(again, expected);

        json_object_put(root);
        json_object_put(newest_first);
        json_object_put(p);
        store_close(s);
        event_base_free(base);
}

/* A result of about 1 KiB, with a slash to escape in history.json. */
static json_object *big_result(int i)
{
        json_object *r = result_of(i % 2 ? "n1" : "n2", "tcp", i);
        char note[1001];

        memset(note, 'x', sizeof(note) - 1);
        note[sizeof(note) - 1] = '\0';
        note[10] = '/';
        json_object_object_add(r, "note", json_object_new_string(note));
        return r;
}

static const int print_flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;

/* Results read from history.json stay there, read back when asked for; those added later leave
 * memory once saved. */
static void test_saved_results_are_read_from_the_file(void)
{
        struct event_base *base = event_base_new();
        json_object *root = json_object_new_object(), *results = json_object_new_array(),
                    *newest_first = json_object_new_array(), *printed;
        struct history *h = NULL;
        struct store *s = NULL;
        const char *text;
        size_t before, loaded;

        CHECK(store_open(dir, &s) == 0);
        if (!s)
                return;
        for (int i = 0; i < 300; i++)
                json_object_array_add(results, big_result(i));
        for (int i = 299; i >= 0; i--)
                json_object_array_add(newest_first, json_object_get(json_object_array_get_idx(results, i)));
        json_object_object_add(root, "version", json_object_new_int(2));
        json_object_object_add(root, "results", results);
        json_object_object_add(root, "baselines", json_object_new_object());
        text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
        CHECK(store_write(s, "history.json", text, strlen(text)) == 0);

        before = heap_in_use();
        CHECK(history_new(base, s, 1000, &h) == 0);
        loaded = heap_in_use();
        /* 300 KiB of results on disk; what stays in memory is their kinds and peers, and the index
         * (some 64 bytes a result). */
        CHECK(loaded < before + 64 * 1024);
        printed = history_query_printed(h, NULL, NULL, 0);
        CHECK_STREQ(json_object_to_json_string_ext(printed, print_flags),
                    json_object_to_json_string_ext(newest_first, print_flags));
        json_object_put(printed);

        /* Replaced behind the daemon's back: what it read stays readable. */
        CHECK(store_write(s, "history.json", "x", 1) == 0);
        printed = history_query_printed(h, NULL, NULL, 0);
        CHECK_STREQ(json_object_to_json_string_ext(printed, print_flags),
                    json_object_to_json_string_ext(newest_first, print_flags));
        json_object_put(printed);

        json_object_put(newest_first);
        newest_first = NULL;
        loaded = heap_in_use();
        for (int i = 0; i < 300; i++) {
                json_object *r = big_result(1000 + i);

                history_add(h, r);
                json_object_put(r);
        }
        CHECK(heap_in_use() > loaded + 300 * 1000);
        /* The save a second later: of the texts, only the index (600 results now) stays. */
        event_base_loop(base, EVLOOP_ONCE);
        CHECK(heap_in_use() < loaded + 48 * 1024);
        history_free(h);

        /* What was saved is the new results: the ones read from the replaced file's text too. */
        CHECK(history_new(base, s, 1000, &h) == 0);
        {
                json_object *q = history_query(h, NULL, NULL, 0);

                json_object *newest = json_object_array_get_idx(q, 0), *m, *v;

                CHECK(json_object_array_length(q) == 600);
                CHECK(json_object_object_get_ex(newest, "measured", &m) &&
                      json_object_object_get_ex(m, "gbps", &v) && json_object_get_double(v) == 1299);
                json_object_put(q);
        }
        history_free(h);
        json_object_put(root);
        store_close(s);
        event_base_free(base);
}

static size_t saved_results(void)
{
        char path[256];
        json_object *file, *results = NULL;
        size_t n;

        snprintf(path, sizeof(path), "%s/history.json", dir);
        file = json_object_from_file(path);
        n = json_object_object_get_ex(file, "results", &results) ? json_object_array_length(results) : 0;
        json_object_put(file);
        return n;
}

/* The first result after a quiet spell is saved within a second; the next ones of a burst wait
 * for the gap after that save (the file rewritten once, not once a result), and a stop saves
 * what waits. */
static void test_a_burst_is_saved_once_a_gap(void)
{
        struct event_base *base = event_base_new();
        struct timeval later = { .tv_sec = 2, .tv_usec = 500000 };
        struct history *h = NULL;
        struct store *s = NULL;

        remove_state("history.json");
        CHECK(store_open(dir, &s) == 0);
        if (!s)
                return;
        CHECK(history_new(base, s, 100, &h) == 0);
        add_result(h, "peer-a", "tcp", 10);
        event_base_loop(base, EVLOOP_ONCE);
        CHECK(saved_results() == 1);
        add_result(h, "peer-a", "tcp", 11);
        add_result(h, "peer-a", "tcp", 12);
        event_base_loopexit(base, &later);
        event_base_dispatch(base);
        CHECK(saved_results() == 1);
        history_free(h);
        CHECK(saved_results() == 3);
        store_close(s);
        event_base_free(base);
}

/* A file another writer made (spaces, slashes escaped or not) reads as its values; the results
 * are saved again as json-c prints them, and only the newest `limit`. */
static void test_other_writers_file_is_read_and_saved_as_printed(void)
{
        struct event_base *base = event_base_new();
        const char *theirs = "{ \"results\" : [\n"
                             "  {\"peer_id\": \"n0\", \"kind\": \"rtt\", \"ok\": true},\n"
                             "  {\"peer_id\": \"n1\", \"peer\": \"b/c\", \"kind\": \"rtt\", \"ok\": true},\n"
                             "  {\"peer_id\":\"n2\",\"kind\":\"rtt\",\"ok\":false,\"x\":\"a\\/b\\\\\"},\n"
                             "  \"not a result\"\n"
                             " ],\n \"version\": 2 }\n";
        const char *expected_printed =
                "[{\"peer_id\":\"n2\",\"kind\":\"rtt\",\"ok\":false,\"x\":\"a/b\\\\\"},"
                "{\"peer_id\":\"n1\",\"peer\":\"b/c\",\"kind\":\"rtt\",\"ok\":true}]";
        const char *expected_saved =
                "{\"version\":2,\"results\":["
                "{\"peer_id\":\"n1\",\"peer\":\"b\\/c\",\"kind\":\"rtt\",\"ok\":true},"
                "{\"peer_id\":\"n2\",\"kind\":\"rtt\",\"ok\":false,\"x\":\"a\\/b\\\\\"}],"
                "\"baselines\":{}}";
        _cleanup_free_ char *saved = NULL;
        struct history *h = NULL;
        struct store *s = NULL;
        json_object *printed;
        size_t len;

        CHECK(store_open(dir, &s) == 0);
        if (!s)
                return;
        CHECK(store_write(s, "history.json", theirs, strlen(theirs)) == 0);
        CHECK(history_new(base, s, 2, &h) == 0);
        printed = history_query_printed(h, NULL, NULL, 0);
        CHECK_STREQ(json_object_to_json_string_ext(printed, print_flags), expected_printed);
        json_object_put(printed);
        printed = history_query_printed(h, "b/c", NULL, 0);
        CHECK(strstr(json_object_to_json_string_ext(printed, print_flags), "\"n1\""));
        json_object_put(printed);
        history_free(h);
        CHECK(store_read(s, "history.json", 1 << 20, &saved, &len) == 0);
        CHECK_STREQ(saved, expected_saved);
        store_close(s);
        event_base_free(base);
}

/* One damaged result damages the file: it is moved aside whole, and nothing of it is kept. */
static void test_damaged_result_moves_the_file_aside(void)
{
        struct event_base *base = event_base_new();
        const char *damaged[] = {
                "{\"version\":2,\"results\":[{\"peer_id\":\"n1\",\"kind\":\"rtt\"},{\"peer_id\":]}",
                "{\"version\":2,\"results\":[{\"peer_id\":\"n1\",\"kind\":\"rtt\"}],\"baselines\":"
                "{\"n1/tcp/gbps\":{\"samples\":[1,2,3],\"value\":2}}} trailing",
                "{\"version\":3,\"results\":[]}",
                "{\"results\":[]}",
                "{\"version\":2,\"results\":[{\"peer_id\":\"n1\",\"kind\":\"rtt\",\"v\":tru}]}",
                "{\"version\":2,\"results\":[{\"peer_id\":\"n1\",\"kind\":\"rtt\"},{\"v\":tru}],"
                "\"baselines\":{\"n1/tcp/gbps\":{\"samples\":[1,2,3],\"value\":2}}}",
        };
        struct history *h = NULL;
        struct store *s = NULL;

        CHECK(store_open(dir, &s) == 0);
        if (!s)
                return;
        for (size_t i = 0; i < ARRAY_SIZE(damaged); i++) {
                json_object *q;

                remove_state("history.json.corrupt");
                CHECK(store_write(s, "history.json", damaged[i], strlen(damaged[i])) == 0);
                CHECK(history_new(base, s, 10, &h) == 0);
                q = history_query(h, NULL, NULL, 0);
                CHECK(json_object_array_length(q) == 0);
                json_object_put(q);
                CHECK(history_baseline(h, "n1", "tcp", NULL, "gbps") == 0);
                CHECK(state_exists("history.json.corrupt"));
                CHECK(!state_exists("history.json"));
                history_free(h);
        }
        store_close(s);
        event_base_free(base);
}

int main(void)
{
        if (!mkdtemp(dir))
                return 1;
        RUN(test_baseline_is_the_median_of_the_first_three);
        RUN(test_baseline_is_per_peer_kind_and_parameters);
        RUN(test_baseline_survives_restart_and_trimmed_results);
        RUN(test_version_one_and_damaged_baselines_load);
        RUN(test_latest_is_one_per_node_and_kind);
        RUN(test_latest_passes_over_deferred);
        RUN(test_generation_moves_with_the_results);
        RUN(test_saved_and_queried_as_the_trees_print);
        RUN(test_saved_results_are_read_from_the_file);
        RUN(test_a_burst_is_saved_once_a_gap);
        RUN(test_other_writers_file_is_read_and_saved_as_printed);
        RUN(test_damaged_result_moves_the_file_aside);
        {
                char cmd[128];

                snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
                if (system(cmd) != 0)
                        return 1;
        }
        return test_result();
}
