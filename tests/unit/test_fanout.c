/* The fan-out: a few peers at a time, on the loop's clock; a newer message replaces what is left
 * and goes to every peer; cancel drops it. The cluster view's summary through it, and the alives
 * of a refresh that comes while it goes. */
#include <errno.h>
#include <event2/event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/node_key.h"
#include "daemon/cluster/cluster.h"
#include "daemon/cluster/fanout.h"
#include "daemon/cluster/summary.h"
#include "test.h"

#define PEERS            10
#define COARSE_TICK_USEC 5000

static struct event_base *base;
static char peers[PEERS][33];
static struct sent {
        char peer[33];
        int64_t at_usec;
        int64_t value;
} sent[64];
static size_t n_sent;
static int64_t started_usec;

static int64_t now_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int record(void *userdata, const char *peer_id, json_object *msg)
{
        if (n_sent < sizeof(sent) / sizeof(sent[0])) {
                snprintf(sent[n_sent].peer, sizeof(sent[n_sent].peer), "%s", peer_id);
                sent[n_sent].at_usec = now_usec() - started_usec;
                sent[n_sent].value = json_object_get_int64(msg);
                n_sent++;
        }
        json_object_put(msg);
        return 0;
}

static void run_for_ms(int ms)
{
        struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
}

static struct fanout *setup(void)
{
        struct fanout *f = NULL;

        base = event_base_new();
        for (int i = 0; i < PEERS; i++)
                snprintf(peers[i], sizeof(peers[i]), "%032d", i);
        n_sent = 0;
        CHECK(fanout_new(base, record, NULL, &f) == 0);
        started_usec = now_usec();
        return f;
}

static void teardown(struct fanout *f)
{
        fanout_free(f);
        event_base_free(base);
}

static size_t sent_to(const char *peer, int64_t value)
{
        size_t n = 0;

        for (size_t i = 0; i < n_sent; i++)
                n += strcmp(sent[i].peer, peer) == 0 && sent[i].value == value;
        return n;
}

static void test_a_group_now_and_the_next_after_each_gap(void)
{
        struct fanout *f = setup();

        CHECK(fanout_start(f, json_object_new_int64(1), (const char(*)[33])peers, PEERS) == 0);
        CHECK(n_sent == FANOUT_GROUP);
        CHECK(fanout_is_pending(f, peers[FANOUT_GROUP]) && !fanout_is_pending(f, peers[0]));
        run_for_ms(10 * FANOUT_GAP_USEC / 1000);
        CHECK(n_sent == PEERS);
        for (int i = 0; i < PEERS; i++) {
                CHECK(sent_to(peers[i], 1) == 1);
                CHECK(strcmp(sent[i].peer, peers[i]) == 0); /* in the order given */
                /* Group g no sooner than g gaps after the start, give or take the tick of
                 * libevent's clock (CLOCK_MONOTONIC_COARSE: 4 ms at HZ=250), by which a timer may
                 * fire before CLOCK_MONOTONIC says it is due. */
                CHECK(sent[i].at_usec >= (int64_t)(i / FANOUT_GROUP) * FANOUT_GAP_USEC - COARSE_TICK_USEC);
        }
        CHECK(sent[PEERS - 1].at_usec < 10LL * FANOUT_GAP_USEC);
        CHECK(!fanout_is_pending(f, peers[PEERS - 1]));
        teardown(f);
}

static void test_a_small_cluster_gets_it_at_once(void)
{
        struct fanout *f = setup();

        CHECK(fanout_start(f, json_object_new_int64(1), (const char(*)[33])peers, FANOUT_GROUP) == 0);
        CHECK(n_sent == FANOUT_GROUP);
        for (int i = 0; i < FANOUT_GROUP; i++)
                CHECK(!fanout_is_pending(f, peers[i]));
        CHECK(fanout_start(f, json_object_new_int64(2), (const char(*)[33])peers, 0) == 0);
        CHECK(n_sent == FANOUT_GROUP);
        teardown(f);
}

static void test_a_newer_message_goes_to_every_peer_and_the_older_stops(void)
{
        struct fanout *f = setup();

        CHECK(fanout_start(f, json_object_new_int64(1), (const char(*)[33])peers, PEERS) == 0);
        CHECK(fanout_start(f, json_object_new_int64(2), (const char(*)[33])peers, PEERS) == 0);
        run_for_ms(10 * FANOUT_GAP_USEC / 1000);
        for (int i = 0; i < PEERS; i++) {
                CHECK(sent_to(peers[i], 1) == (i < FANOUT_GROUP ? 1 : 0));
                CHECK(sent_to(peers[i], 2) == 1);
        }
        teardown(f);
}

static void test_cancel_drops_the_rest(void)
{
        struct fanout *f = setup();

        CHECK(fanout_start(f, json_object_new_int64(1), (const char(*)[33])peers, PEERS) == 0);
        fanout_cancel(f);
        CHECK(!fanout_is_pending(f, peers[PEERS - 1]));
        run_for_ms(10 * FANOUT_GAP_USEC / 1000);
        CHECK(n_sent == FANOUT_GROUP);
        teardown(f);
}

static unsigned summaries_to[PEERS], alives_to[PEERS];

static int count_by_type(void *userdata, const char *peer_id, json_object *msg)
{
        int i = atoi(peer_id);
        const char *type = json_object_get_string(json_object_object_get(msg, "type"));

        if (i >= 0 && i < PEERS && type) {
                summaries_to[i] += strcmp(type, SUMMARY_TYPE) == 0;
                alives_to[i] += strcmp(type, SUMMARY_ALIVE_TYPE) == 0;
        }
        json_object_put(msg);
        return 0;
}

static int no_hello_name(void *userdata, const char *peer_id, char *buf, size_t size)
{
        return -ENOENT;
}

static void test_a_refresh_during_the_fan_out_skips_the_peers_still_to_get_it(void)
{
        struct cluster_transport t = { .send = count_by_type, .hello_name = no_hello_name };
        struct fanout *unused = setup();
        struct cluster *c = NULL;
        json_object *doctor = json_object_new_object();
        EVP_PKEY *key = node_key_generate();
        char id[33];

        CHECK(key && node_key_id(key, id) == 0);
        CHECK(cluster_new(base, id, "self", &t, &c) == 0);
        cluster_set_node_key(c, key);
        cluster_configure(c, "self", 1000000, 10000000);
        cluster_set_refresh_external(c, true);
        for (int i = 0; i < PEERS; i++)
                cluster_peer_up(c, peers[i]);
        run_for_ms(200 + 10 * FANOUT_GAP_USEC / 1000); /* the peers section coalesced and sent */
        memset(summaries_to, 0, sizeof(summaries_to));
        memset(alives_to, 0, sizeof(alives_to));
        json_object_object_add(doctor, "verdict", json_object_new_string("failed"));
        CHECK(cluster_set_section(c, "doctor", doctor) == 0);
        cluster_refresh(c); /* the change, to the first group */
        cluster_refresh(c); /* nothing new: alives, but not where the summary is still to go */
        for (int i = 0; i < PEERS; i++) {
                CHECK(summaries_to[i] == (i < FANOUT_GROUP ? 1u : 0u));
                CHECK(alives_to[i] == (i < FANOUT_GROUP ? 1u : 0u));
        }
        run_for_ms(10 * FANOUT_GAP_USEC / 1000);
        for (int i = 0; i < PEERS; i++)
                CHECK(summaries_to[i] == 1);
        cluster_free(c);
        EVP_PKEY_free(key);
        teardown(unused);
}

int main(void)
{
        RUN(test_a_group_now_and_the_next_after_each_gap);
        RUN(test_a_small_cluster_gets_it_at_once);
        RUN(test_a_newer_message_goes_to_every_peer_and_the_older_stops);
        RUN(test_cancel_drops_the_rest);
        RUN(test_a_refresh_during_the_fan_out_skips_the_peers_still_to_get_it);
        return test_result();
}
