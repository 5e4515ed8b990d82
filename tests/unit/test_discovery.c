#include <errno.h>
#include <event2/event.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/strutil.h"
#include "daemon/base/log.h"
#include "daemon/peers/avahi_poll.h"
#include "daemon/peers/discovery.h"
#include "test.h"

#define NODE_ID "0123456789abcdef0123456789abcdef"

/* ---- TXT record codec ---- */

static char **txt_of(const char *const *items)
{
        char **v = calloc(1, sizeof(char *));

        for (; *items; items++)
                strv_push(&v, *items);
        return v;
}

/* Decodes the five good items with one replaced (or dropped: replacement NULL) or one added. */
static int decode_with(const char *key, const char *replacement, const char *extra)
{
        const char *good[] = { "v=1", "id=" NODE_ID, "name=spark-1", "addrs=10.0.0.1,10.0.1.1",
                               "port=7471" };
        char **v = calloc(1, sizeof(char *));
        struct discovery_record r = { 0 };
        int k;

        for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
                if (key && strncmp(good[i], key, strlen(key)) == 0 && good[i][strlen(key)] == '=') {
                        if (replacement)
                                strv_push(&v, replacement);
                        continue;
                }
                strv_push(&v, good[i]);
        }
        if (extra)
                strv_push(&v, extra);
        k = discovery_txt_decode(v, &r);
        discovery_record_clear(&r);
        strv_free(v);
        return k;
}

static void test_txt_round_trip(void)
{
        char *addrs[] = { "10.0.0.1", "10.0.1.1", "192.168.100.2", NULL };
        struct discovery_record in = { .proto = DISCOVERY_PROTO,
                                       .node_id = NODE_ID,
                                       .name = "spark-1.lab_A",
                                       .addresses = addrs,
                                       .port = 7471 };
        struct discovery_record out = { 0 };
        char **txt = NULL;

        CHECK(discovery_txt_encode(&in, &txt) == 0);
        CHECK(strv_length(txt) == 5);
        if (strv_length(txt) != 5)
                return;
        CHECK_STREQ(txt[0], "v=1");
        CHECK_STREQ(txt[1], "id=" NODE_ID);
        CHECK_STREQ(txt[2], "name=spark-1.lab_A");
        CHECK_STREQ(txt[3], "addrs=10.0.0.1,10.0.1.1,192.168.100.2");
        CHECK_STREQ(txt[4], "port=7471");
        CHECK(discovery_txt_decode(txt, &out) == 0);
        CHECK(out.proto == 1);
        CHECK_STREQ(out.node_id, NODE_ID);
        CHECK_STREQ(out.name, "spark-1.lab_A");
        CHECK(strv_length(out.addresses) == 3);
        if (strv_length(out.addresses) == 3) {
                CHECK_STREQ(out.addresses[0], "10.0.0.1");
                CHECK_STREQ(out.addresses[2], "192.168.100.2");
        }
        CHECK(out.port == 7471);
        discovery_record_clear(&out);
        CHECK(out.addresses == NULL);
        strv_free(txt);
}

static void test_txt_no_addresses(void)
{
        struct discovery_record in = { .proto = 1, .node_id = NODE_ID, .name = "s", .port = 1 };
        struct discovery_record out = { 0 };
        char **txt = NULL;

        /* A node without fabric addresses yet is still a peer: "addrs=" with nothing after it. */
        CHECK(discovery_txt_encode(&in, &txt) == 0);
        CHECK(txt && strv_contains(txt, "addrs="));
        CHECK(discovery_txt_decode(txt, &out) == 0);
        CHECK(out.addresses && out.addresses[0] == NULL);
        discovery_record_clear(&out);
        strv_free(txt);
}

static void test_txt_encode_rejects(void)
{
        char *bad_addr[] = { "10.0.0.256", NULL };
        char *v6[] = { "fe80::1", NULL };
        char *many[18] = { 0 };
        char *longest[17] = { 0 };
        struct discovery_record r = { .proto = 1, .node_id = NODE_ID, .name = "spark-1", .port = 7471 };
        char **txt = NULL;

        r.node_id[0] = 'A';
        CHECK(discovery_txt_encode(&r, &txt) == -EINVAL);
        memcpy(r.node_id, NODE_ID, sizeof(r.node_id));
        snprintf(r.name, sizeof(r.name), "spark 1");
        CHECK(discovery_txt_encode(&r, &txt) == -EINVAL);
        r.name[0] = '\0';
        CHECK(discovery_txt_encode(&r, &txt) == -EINVAL);
        snprintf(r.name, sizeof(r.name), "spark-1");
        r.port = 0;
        CHECK(discovery_txt_encode(&r, &txt) == -EINVAL);
        r.port = 7471;
        r.addresses = bad_addr;
        CHECK(discovery_txt_encode(&r, &txt) == -EINVAL);
        r.addresses = v6;
        CHECK(discovery_txt_encode(&r, &txt) == -EINVAL);
        for (int i = 0; i < 17; i++)
                many[i] = "10.0.0.1";
        r.addresses = many;
        CHECK(discovery_txt_encode(&r, &txt) == -EINVAL);
        /* 16 addresses fit the codec but not always one TXT string (255 bytes). */
        for (int i = 0; i < 16; i++)
                longest[i] = "192.168.100.200";
        r.addresses = longest;
        CHECK(discovery_txt_encode(&r, &txt) == -E2BIG);
        CHECK(txt == NULL);
}

static void test_txt_decode_rejects(void)
{
        static const char *const keys[] = { "v", "id", "name", "addrs", "port" };
        static const struct {
                const char *key, *item;
        } bad[] = {
                { "v", "v=" },
                { "v", "v=one" },
                { "v", "v=-1" },
                { "v", "v=+1" },
                { "v", "v= 1" },
                { "v", "v=1.0" },
                { "v", "v=4294967296" },
                { "v", "v" },
                { "id", "id=" },
                { "id", "id=0123456789ABCDEF0123456789abcdef" },
                { "id", "id=0123456789abcdef0123456789abcde" },
                { "id", "id=0123456789abcdef0123456789abcdef0" },
                { "id", "id=0123456789abcdef0123456789abcdeg" },
                { "id", "id= 123456789abcdef0123456789abcdef" },
                { "name", "name=" },
                { "name", "name=spark 1" },
                { "name", "name=spark/1" },
                { "name", "name=sp\xc3\xa4rk" },
                { "name", "name=0123456789012345678901234567890123456789012345678901234567890123" },
                { "addrs", "addrs=10.0.0" },
                { "addrs", "addrs=10.0.0.1," },
                { "addrs", "addrs=,10.0.0.1" },
                { "addrs", "addrs=10.0.0.1,,10.0.0.2" },
                { "addrs", "addrs=10.0.0.1 10.0.0.2" },
                { "addrs", "addrs=256.0.0.1" },
                { "addrs", "addrs=010.0.0.1" },
                { "addrs", "addrs=fe80::1" },
                { "addrs", "addrs=spark-2" },
                { "addrs", "addrs=1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,"
                           "1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1" },
                { "port", "port=" },
                { "port", "port=0" },
                { "port", "port=65536" },
                { "port", "port=http" },
                { "port", "port=-1" },
        };
        struct discovery_record r = { 0 };

        CHECK(decode_with(NULL, NULL, NULL) == 0);
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
                int k = decode_with(keys[i], NULL, NULL);

                if (k != -EBADMSG)
                        fprintf(stderr, "missing %s: got %d\n", keys[i], k);
                CHECK(k == -EBADMSG);
        }
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                int k = decode_with(bad[i].key, bad[i].item, NULL);

                if (k != -EBADMSG)
                        fprintf(stderr, "accepted '%s': %d\n", bad[i].item, k);
                CHECK(k == -EBADMSG);
        }
        /* A key twice is ambiguous: which one would a peer mean? */
        CHECK(decode_with(NULL, NULL, "port=7472") == -EBADMSG);
        CHECK(decode_with(NULL, NULL, "id=" NODE_ID) == -EBADMSG);
        /* Keys are exact: "ID" is some other key, so id is missing. */
        CHECK(decode_with("id", "ID=" NODE_ID, NULL) == -EBADMSG);
        CHECK(discovery_txt_decode(NULL, &r) == -EBADMSG);
        CHECK(r.addresses == NULL);
}

static void test_txt_decode_accepts(void)
{
        const char *newer[] = { "gpu=gb10", "port=7471",      "v=2",         "flag", "name=spark-1",
                                "=odd",     "addrs=10.0.0.1", "id=" NODE_ID, NULL };
        char **v = txt_of(newer);
        struct discovery_record r = { 0 };

        /* A newer peer: unknown keys are ignored and v>1 is decoded; the caller decides. */
        CHECK(discovery_txt_decode(v, &r) == 0);
        CHECK(r.proto == 2);
        CHECK(r.port == 7471);
        CHECK(strv_length(r.addresses) == 1);
        discovery_record_clear(&r);
        strv_free(v);

        CHECK(decode_with("name", "name=012345678901234567890123456789012345678901234567890123456789012",
                          NULL) == 0);
        CHECK(decode_with("addrs",
                          "addrs=1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,"
                          "1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1,1.1.1.1",
                          NULL) == 0);
        CHECK(decode_with("port", "port=65535", NULL) == 0);
        CHECK(decode_with("v", "v=0", NULL) == 0);
}

/* ---- the AvahiPoll adapter on a real event_base ---- */

struct watch_probe {
        const AvahiPoll *api;
        int calls;
        AvahiWatchEvent last, during;
        bool free_in_callback;
        AvahiWatch **other; /* freed from this callback, when set */
        int fd;
};

static void on_watch(AvahiWatch *w, int fd, AvahiWatchEvent event, void *userdata)
{
        struct watch_probe *p = userdata;
        char buf[16];

        p->calls++;
        p->last = event;
        p->fd = fd;
        p->during = p->api->watch_get_events(w);
        if (event & AVAHI_WATCH_IN)
                (void)!read(fd, buf, sizeof(buf));
        if (p->other && *p->other) {
                p->api->watch_free(*p->other);
                *p->other = NULL;
        }
        if (p->free_in_callback)
                p->api->watch_free(w);
}

static void run_for_ms(struct event_base *base, int ms)
{
        struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
}

static void test_watch_in(void)
{
        struct event_base *base = event_base_new();
        struct avahi_poll *poll = NULL;
        const AvahiPoll *api;
        struct watch_probe p = { 0 };
        AvahiWatch *w;
        int fds[2];

        CHECK(avahi_poll_new(base, &poll) == 0);
        api = avahi_poll_get(poll);
        p.api = api;
        CHECK(pipe(fds) == 0);
        w = api->watch_new(api, fds[0], AVAHI_WATCH_IN, on_watch, &p);
        CHECK(w != NULL);
        run_for_ms(base, 20);
        CHECK(p.calls == 0);
        CHECK(write(fds[1], "x", 1) == 1);
        run_for_ms(base, 50);
        CHECK(p.calls == 1);
        CHECK(p.last == AVAHI_WATCH_IN);
        CHECK(p.during == AVAHI_WATCH_IN);
        CHECK(p.fd == fds[0]);
        CHECK(api->watch_get_events(w) == 0); /* only meaningful inside the callback */

        /* Not interested: no callback although data waits. */
        api->watch_update(w, 0);
        CHECK(write(fds[1], "y", 1) == 1);
        run_for_ms(base, 30);
        CHECK(p.calls == 1);
        api->watch_update(w, AVAHI_WATCH_IN);
        run_for_ms(base, 30);
        CHECK(p.calls == 2);

        /* The writer goes away: poll(2) semantics say HUP. */
        close(fds[1]);
        run_for_ms(base, 30);
        CHECK(p.calls >= 3);
        CHECK(p.last & AVAHI_WATCH_HUP);
        api->watch_free(w);
        close(fds[0]);
        CHECK(avahi_poll_live(poll) == 0);
        avahi_poll_free(poll);
        event_base_free(base);
}

static void test_watch_out_and_update(void)
{
        struct event_base *base = event_base_new();
        struct avahi_poll *poll = NULL;
        const AvahiPoll *api;
        struct watch_probe p = { 0 };
        AvahiWatch *w;
        int fds[2];

        CHECK(avahi_poll_new(base, &poll) == 0);
        api = avahi_poll_get(poll);
        p.api = api;
        p.free_in_callback = true;
        CHECK(pipe(fds) == 0);
        w = api->watch_new(api, fds[1], 0, on_watch, &p);
        CHECK(w != NULL);
        run_for_ms(base, 20);
        CHECK(p.calls == 0);
        api->watch_update(w, AVAHI_WATCH_OUT);
        run_for_ms(base, 30);
        CHECK(p.calls == 1);
        CHECK(p.last == AVAHI_WATCH_OUT);
        CHECK(avahi_poll_live(poll) == 0);
        close(fds[0]);
        close(fds[1]);
        avahi_poll_free(poll);
        event_base_free(base);
}

static void test_watch_free_in_callback(void)
{
        struct event_base *base = event_base_new();
        struct avahi_poll *poll = NULL;
        const AvahiPoll *api;
        struct watch_probe p = { 0 };
        int fds[2];

        CHECK(avahi_poll_new(base, &poll) == 0);
        api = avahi_poll_get(poll);
        p.api = api;
        p.free_in_callback = true;
        CHECK(pipe(fds) == 0);
        CHECK(api->watch_new(api, fds[0], AVAHI_WATCH_IN, on_watch, &p) != NULL);
        CHECK(write(fds[1], "xx", 2) == 2);
        /* Freed from its own callback: nothing left, so the loop ends by itself. */
        CHECK(event_base_dispatch(base) == 1);
        CHECK(p.calls == 1);
        CHECK(avahi_poll_live(poll) == 0);
        close(fds[0]);
        close(fds[1]);
        avahi_poll_free(poll);
        event_base_free(base);
}

static void test_watches_free_each_other(void)
{
        struct event_base *base = event_base_new();
        struct avahi_poll *poll = NULL;
        const AvahiPoll *api;
        struct watch_probe a = { 0 }, b = { 0 };
        AvahiWatch *wa, *wb;
        int fa[2], fb[2];

        CHECK(avahi_poll_new(base, &poll) == 0);
        api = avahi_poll_get(poll);
        a.api = b.api = api;
        CHECK(pipe(fa) == 0 && pipe(fb) == 0);
        CHECK(write(fa[1], "a", 1) == 1 && write(fb[1], "b", 1) == 1);
        wa = api->watch_new(api, fa[0], AVAHI_WATCH_IN, on_watch, &a);
        wb = api->watch_new(api, fb[0], AVAHI_WATCH_IN, on_watch, &b);
        a.other = &wb;
        b.other = &wa;
        /* Both are ready in the same iteration; whichever runs first frees the other, which then
         * must not run. */
        run_for_ms(base, 30);
        CHECK(a.calls + b.calls == 1);
        CHECK(avahi_poll_live(poll) == 1);
        if (wa)
                api->watch_free(wa);
        if (wb)
                api->watch_free(wb);
        CHECK(avahi_poll_live(poll) == 0);
        close(fa[0]);
        close(fa[1]);
        close(fb[0]);
        close(fb[1]);
        avahi_poll_free(poll);
        event_base_free(base);
}

struct timeout_probe {
        const AvahiPoll *api;
        int calls;
        struct timeval at;
        int rearm; /* times to re-arm from the callback, 10 ms ahead */
        bool free_it;
};

static void on_timeout(AvahiTimeout *t, void *userdata)
{
        struct timeout_probe *p = userdata;

        p->calls++;
        gettimeofday(&p->at, NULL);
        if (p->rearm > 0) {
                struct timeval tv = p->at;

                p->rearm--;
                tv.tv_usec += 10000;
                if (tv.tv_usec >= 1000000) {
                        tv.tv_sec++;
                        tv.tv_usec -= 1000000;
                }
                p->api->timeout_update(t, &tv);
        }
        if (p->free_it)
                p->api->timeout_free(t);
}

static struct timeval in_ms(int ms)
{
        struct timeval now, d = { ms / 1000, (ms % 1000) * 1000 }, r;

        gettimeofday(&now, NULL);
        timeradd(&now, &d, &r);
        return r;
}

static long ms_between(const struct timeval *a, const struct timeval *b)
{
        return (long)(b->tv_sec - a->tv_sec) * 1000 + (long)(b->tv_usec - a->tv_usec) / 1000;
}

static void test_timeout_fires_once(void)
{
        struct event_base *base = event_base_new();
        struct avahi_poll *poll = NULL;
        const AvahiPoll *api;
        struct timeout_probe p = { 0 };
        struct timeval start, when;
        AvahiTimeout *t;

        CHECK(avahi_poll_new(base, &poll) == 0);
        api = avahi_poll_get(poll);
        p.api = api;
        gettimeofday(&start, NULL);
        when = in_ms(100);
        t = api->timeout_new(api, &when, on_timeout, &p);
        CHECK(t != NULL);
        run_for_ms(base, 400);
        CHECK(p.calls == 1);
        /* Never early against the absolute time asked for; late only by scheduling noise. */
        CHECK(ms_between(&when, &p.at) >= -1);
        CHECK(ms_between(&start, &p.at) < 500);
        api->timeout_free(t);

        /* A time already past fires on the next iteration. */
        p.calls = 0;
        when = in_ms(-1000);
        t = api->timeout_new(api, &when, on_timeout, &p);
        run_for_ms(base, 20);
        CHECK(p.calls == 1);
        api->timeout_free(t);
        CHECK(avahi_poll_live(poll) == 0);
        avahi_poll_free(poll);
        event_base_free(base);
}

static void test_timeout_disabled(void)
{
        struct event_base *base = event_base_new();
        struct avahi_poll *poll = NULL;
        const AvahiPoll *api;
        struct timeout_probe p = { 0 };
        struct timeval when = in_ms(30);
        AvahiTimeout *t, *never;

        CHECK(avahi_poll_new(base, &poll) == 0);
        api = avahi_poll_get(poll);
        p.api = api;
        t = api->timeout_new(api, &when, on_timeout, &p);
        api->timeout_update(t, NULL);
        never = api->timeout_new(api, NULL, on_timeout, &p);
        CHECK(t && never);
        run_for_ms(base, 150);
        CHECK(p.calls == 0);
        /* Enabled again, it fires. */
        when = in_ms(10);
        api->timeout_update(never, &when);
        run_for_ms(base, 100);
        CHECK(p.calls == 1);
        api->timeout_free(t);
        api->timeout_free(never);
        CHECK(avahi_poll_live(poll) == 0);
        avahi_poll_free(poll);
        event_base_free(base);
}

static void test_timeout_rearm_and_free_in_callback(void)
{
        struct event_base *base = event_base_new();
        struct avahi_poll *poll = NULL;
        const AvahiPoll *api;
        struct timeout_probe p = { 0 }, q = { 0 };
        struct timeval when = in_ms(5);
        AvahiTimeout *t;

        CHECK(avahi_poll_new(base, &poll) == 0);
        api = avahi_poll_get(poll);
        p.api = q.api = api;
        p.rearm = 2;
        t = api->timeout_new(api, &when, on_timeout, &p);
        q.free_it = true;
        CHECK(api->timeout_new(api, &when, on_timeout, &q) != NULL);
        run_for_ms(base, 200);
        CHECK(p.calls == 3); /* once, then twice more as re-armed from its own callback */
        CHECK(q.calls == 1);
        CHECK(avahi_poll_live(poll) == 1);
        api->timeout_free(t);
        CHECK(avahi_poll_live(poll) == 0);
        avahi_poll_free(poll);
        event_base_free(base);
}

/* ---- discovery without any Avahi ---- */

static void on_found(const struct discovery_record *record, void *userdata)
{
        (*(int *)userdata)++;
}

static void on_lost(const char *node_id, void *userdata)
{
        (*(int *)userdata)++;
}

static void test_discovery_without_bus(void)
{
        char *addrs[] = { "10.0.0.1", NULL };
        struct discovery_record self = {
                .proto = 1, .node_id = NODE_ID, .name = "spark-1", .addresses = addrs, .port = 7471
        };
        struct event_base *base = event_base_new();
        struct discovery *d = NULL;
        char logfile[] = "/tmp/sparkd-test-discovery.XXXXXX", buf[4096] = "";
        int calls = 0, saved, fd, n = 0;
        ssize_t len;

        /* No system bus: the client cannot even be made. One notice, then quiet retries. */
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/sparkd-test/system_bus_socket", 1);
        fd = mkstemp(logfile);
        CHECK(fd >= 0);
        fflush(stderr);
        saved = dup(2);
        dup2(fd, 2);
        log_open(LOG_TARGET_STDERR, false);
        CHECK(discovery_new(base, on_found, on_lost, &calls, &d) == 0);
        CHECK(d && !discovery_is_available(d));
        CHECK(discovery_publish(d, &self) == 0);
        self.port = 0;
        CHECK(discovery_publish(d, &self) == -EINVAL);
        run_for_ms(base, 1300); /* the first retry comes after 1 s */
        CHECK(!discovery_is_available(d));
        discovery_free(d);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        len = pread(fd, buf, sizeof(buf) - 1, 0);
        close(fd);
        unlink(logfile);
        buf[len > 0 ? len : 0] = '\0';
        for (const char *s = buf; (s = strstr(s, "avahi-daemon is not running")); s++)
                n++;
        CHECK(n == 1);
        CHECK(calls == 0);
        event_base_free(base);
}

int main(void)
{
        RUN(test_txt_round_trip);
        RUN(test_txt_no_addresses);
        RUN(test_txt_encode_rejects);
        RUN(test_txt_decode_rejects);
        RUN(test_txt_decode_accepts);
        RUN(test_watch_in);
        RUN(test_watch_out_and_update);
        RUN(test_watch_free_in_callback);
        RUN(test_watches_free_each_other);
        RUN(test_timeout_fires_once);
        RUN(test_timeout_disabled);
        RUN(test_timeout_rearm_and_free_in_callback);
        RUN(test_discovery_without_bus);
        return test_result();
}
