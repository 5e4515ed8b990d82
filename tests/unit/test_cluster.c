/* The cluster view on a loop of in-process nodes: a ring of four, where opposite nodes have no
 * connection and hear of each other only through relays. */
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "common/node_key.h"
#include "daemon/base/log.h"
#include "daemon/cluster/cluster.h"
#include "daemon/cluster/summary.h"
#include "test.h"

#define N 4

static struct event_base *base;
static struct cluster *nodes[N];
static char ids[N][33];
static EVP_PKEY *keys[N];
/* Nodes only relays speak of: far_key names far_id; many_keys the 64 one relay may bring. */
static EVP_PKEY *far_key, *many_keys[CLUSTER_MAX_NODES / 4];
static char far_id[33];
static char names[N][16];
static bool link_up[N][N];
static unsigned delivered, delivered_summaries, delivered_alives, delivered_offers, delivered_wants;
static unsigned summaries_from[N], alives_from[N], wants_from[N];
/* The length of the longest summary from spark1 to spark2 since it was last reset, on the wire. */
static size_t longest_summary_0_to_1;

struct in_flight {
        int from, to;
        char *text;
        struct event *ev;
};

static int index_of(const char *id)
{
        for (int i = 0; i < N; i++)
                if (strcmp(ids[i], id) == 0)
                        return i;
        return -1;
}

static void on_deliver(evutil_socket_t fd, short what, void *userdata)
{
        struct in_flight *f = userdata;
        json_object *m = json_tokener_parse(f->text);

        if (m && nodes[f->to] && link_up[f->from][f->to]) {
                delivered++;
                delivered_summaries += strstr(f->text, "\"cluster-summary\"") != NULL;
                delivered_alives += strstr(f->text, "\"cluster-alive\"") != NULL;
                delivered_offers += strstr(f->text, "\"cluster-offer\"") != NULL;
                delivered_wants += strstr(f->text, "\"cluster-want\"") != NULL;
                wants_from[f->from] += strstr(f->text, "\"cluster-want\"") != NULL;
                summaries_from[f->from] += strstr(f->text, "\"cluster-summary\"") != NULL;
                alives_from[f->from] += strstr(f->text, "\"cluster-alive\"") != NULL;
                if (f->from == 0 && f->to == 1 && strstr(f->text, "\"cluster-summary\"") &&
                    strlen(f->text) > longest_summary_0_to_1)
                        longest_summary_0_to_1 = strlen(f->text);
                (void)cluster_receive_message(nodes[f->to], ids[f->from], m);
        }
        json_object_put(m);
        event_free(f->ev);
        free(f->text);
        free(f);
}

/* userdata is the sender's index; the message goes through text, as on the wire. */
static int fake_send(void *userdata, const char *peer_id, json_object *msg)
{
        int from = (int)(intptr_t)userdata, to = index_of(peer_id);
        struct in_flight *f;
        struct timeval tv = { 0, 1000 };

        if (to < 0 || !link_up[from][to]) {
                json_object_put(msg);
                return -ENOTCONN;
        }
        f = calloc(1, sizeof(*f));
        f->from = from;
        f->to = to;
        f->text = strdup(json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN));
        f->ev = evtimer_new(base, on_deliver, f);
        evtimer_add(f->ev, &tv);
        json_object_put(msg);
        return 0;
}

/* Whether the nodes are over their traffic budget, and how often they were asked. */
static bool over_budget;
static unsigned budget_asked;
static bool fake_budget_defers(void *userdata)
{
        budget_asked++;
        return over_budget;
}

static int fake_hello_name(void *userdata, const char *peer_id, char *buf, size_t size)
{
        int i = index_of(peer_id);

        if (i < 0)
                return -ENOENT;
        snprintf(buf, size, "%s", names[i]);
        return 0;
}

static void start_node(int i)
{
        struct cluster_transport t = { .send = fake_send,
                                       .hello_name = fake_hello_name,
                                       .budget_defers = fake_budget_defers,
                                       .userdata = (void *)(intptr_t)i };

        CHECK(cluster_new(base, ids[i], names[i], &t, &nodes[i]) == 0);
        cluster_set_node_key(nodes[i], keys[i]);
        /* Refresh every 100 ms: stale after 300 ms; forgotten after 2 s. */
        cluster_configure(nodes[i], names[i], 100000, 2000000);
}

static void connect_pair(int a, int b)
{
        link_up[a][b] = link_up[b][a] = true;
        cluster_peer_up(nodes[a], ids[b]);
        cluster_peer_up(nodes[b], ids[a]);
}

static void disconnect_pair(int a, int b)
{
        link_up[a][b] = link_up[b][a] = false;
        if (nodes[a])
                cluster_peer_down(nodes[a], ids[b]);
        if (nodes[b])
                cluster_peer_down(nodes[b], ids[a]);
}

static void run_for_ms(int ms)
{
        struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
}

static json_object *doctor_of(const char *verdict)
{
        json_object *d = json_object_new_object();

        json_object_object_add(d, "verdict", json_object_new_string(verdict));
        return d;
}

/* The verdict in node_id's doctor section as node at holds it; NULL when it holds none. */
static const char *verdict_held(int at, const char *node_id, uint64_t *age, bool *stale)
{
        static char verdict[64];
        json_object *d = cluster_get_section(nodes[at], node_id, "doctor", age, stale);

        if (!d)
                return NULL;
        snprintf(verdict, sizeof(verdict), "%s",
                 json_object_get_string(json_object_object_get(d, "verdict")));
        json_object_put(d);
        return verdict;
}

static const char *verdict_seen(int at, int of, uint64_t *age, bool *stale)
{
        return verdict_held(at, ids[of], age, stale);
}

/* Runs the loop until node at holds verdict for node of, for at most max_ms; whether it came. A
 * relay is a few hops of 1 ms each, and a window as short as those hops fails on a loaded machine:
 * the window's end and a hop's delivery fall due together, and the next hop waits past the end. */
static bool run_until_verdict(int at, int of, const char *verdict, int max_ms)
{
        for (int waited = 0; waited < max_ms; waited += 5) {
                const char *seen = verdict_seen(at, of, NULL, NULL);

                if (seen && strcmp(seen, verdict) == 0)
                        return true;
                run_for_ms(5);
        }
        return false;
}

static unsigned watch_calls;
static void on_watch(void *userdata)
{
        watch_calls++;
}

static void setup_ring(void)
{
        base = event_base_new();
        log_set_max_level(LOG_EMERG);
        for (int i = 0; i < N; i++) {
                if (!keys[i])
                        keys[i] = node_key_generate();
                CHECK(node_key_id(keys[i], ids[i]) == 0);
                snprintf(names[i], sizeof(names[i]), "spark%d", i + 1);
                start_node(i);
        }
        for (int i = 0; i < N; i++)
                connect_pair(i, (i + 1) % N);
}

static void teardown(void)
{
        for (int i = 0; i < N; i++) {
                cluster_free(nodes[i]);
                nodes[i] = NULL;
        }
        memset(link_up, 0, sizeof(link_up));
        run_for_ms(10); /* what was in flight is delivered nowhere */
        event_base_free(base);
}

static void test_a_change_reaches_the_opposite_node_through_a_relay(void)
{
        uint64_t age = 0;
        bool stale = true;

        setup_ring();
        CHECK(cluster_watch(nodes[2], on_watch, NULL) == 0);
        CHECK(cluster_set_section(nodes[0], "doctor", doctor_of("failed")) == 0);
        run_for_ms(250);
        /* spark1 and spark3 have no connection: spark3 holds spark1's summary through a relay. */
        CHECK_STREQ(verdict_seen(2, 0, &age, &stale), "failed");
        CHECK(!stale);
        CHECK(age < 300000);
        CHECK(watch_calls > 0);
        CHECK_STREQ(verdict_seen(0, 0, &age, &stale), "failed");
        CHECK(age == 0);
        /* A name every peer would refuse is refused here. */
        CHECK(cluster_set_section(nodes[0], "Not A Name", doctor_of("ok")) == -EINVAL);

        CHECK(cluster_set_section(nodes[0], "doctor", doctor_of("ok")) == 0);
        run_for_ms(250);
        for (int i = 1; i < N; i++)
                CHECK_STREQ(verdict_seen(i, 0, NULL, NULL), "ok");
        /* Removing a section reaches the others too. */
        CHECK(cluster_set_section(nodes[0], "doctor", NULL) == 0);
        run_for_ms(250);
        CHECK(verdict_seen(2, 0, NULL, NULL) == NULL);
        teardown();
}

static void test_refreshes_end_and_cost_a_few_messages_per_origin(void)
{
        setup_ring();
        run_for_ms(200);
        delivered = 0;
        run_for_ms(1000);
        /* About ten refreshes per origin, each on every one of the ring's 8 directed links at most:
         * a flood that ended. */
        CHECK(delivered > 0);
        CHECK(delivered <= 4 * 12 * 8);
        teardown();
}

/* Driven from outside (the daemon's heartbeat tick): no timer of the view's own sends, and each
 * cluster_refresh sends one alive to every up peer, or the summary when it changed. */
static void test_an_external_refresh_sends_on_each_call_only(void)
{
        setup_ring();
        run_for_ms(300);
        for (int i = 0; i < N; i++)
                cluster_set_refresh_external(nodes[i], true);
        run_for_ms(20);
        memset(alives_from, 0, sizeof(alives_from));
        memset(summaries_from, 0, sizeof(summaries_from));
        run_for_ms(300);
        for (int i = 0; i < N; i++)
                CHECK(alives_from[i] == 0 && summaries_from[i] == 0);
        /* To its two up peers, who pass it on to the opposite node. */
        cluster_refresh(nodes[0]);
        run_for_ms(20);
        CHECK(alives_from[0] == 2 && summaries_from[0] == 0);
        CHECK(alives_from[1] == 1 && alives_from[3] == 1);
        /* A change goes with the refresh, before its own 200 ms. */
        CHECK(cluster_set_section(nodes[0], "doctor", doctor_of("failed")) == 0);
        cluster_refresh(nodes[0]);
        run_for_ms(20);
        CHECK(summaries_from[0] == 2 && alives_from[0] == 2);
        CHECK(run_until_verdict(2, 0, "failed", 2000));
        /* Its own timer again: every 100 ms. */
        cluster_set_refresh_external(nodes[2], false);
        run_for_ms(250);
        CHECK(alives_from[2] >= 4 && alives_from[2] <= 6);
        teardown();
}

/* A full mesh at rest relays nothing and refreshes with alives, not sections; a change reaches
 * every node once, first hand. */
static void test_a_mesh_at_rest_sends_alives_only(void)
{
        setup_ring();
        connect_pair(0, 2);
        connect_pair(1, 3);
        run_for_ms(500);
        delivered_summaries = delivered_alives = 0;
        run_for_ms(1000);
        CHECK(delivered_summaries == 0);
        /* 4 nodes, 3 peers each, about ten refreshes of 100 ms. */
        CHECK(delivered_alives >= 4 * 3 * 8 && delivered_alives <= 4 * 3 * 11);
        CHECK(cluster_set_section(nodes[0], "doctor", doctor_of("failed")) == 0);
        delivered_summaries = 0;
        run_for_ms(300);
        CHECK(delivered_summaries == 3);
        for (int i = 1; i < N; i++)
                CHECK_STREQ(verdict_seen(i, 0, NULL, NULL), "failed");
        teardown();
}

/* Relays follow the peers each node says it has: in a full mesh none, and when a link of it is
 * lost, round it again, to both of its ends. */
static void test_a_mesh_that_loses_a_link_relays_round_it(void)
{
        setup_ring();
        connect_pair(0, 2);
        connect_pair(1, 3);
        run_for_ms(500);
        disconnect_pair(0, 2);
        run_for_ms(300);
        CHECK(cluster_set_section(nodes[0], "doctor", doctor_of("failed")) == 0);
        CHECK(cluster_set_section(nodes[2], "doctor", doctor_of("warning")) == 0);
        delivered_summaries = 0;
        run_for_ms(300);
        CHECK_STREQ(verdict_seen(2, 0, NULL, NULL), "failed");
        CHECK_STREQ(verdict_seen(0, 2, NULL, NULL), "warning");
        /* Each change to its 2 peers, and from each of them on to the far end. */
        CHECK(delivered_summaries >= 2 * (2 + 1));
        connect_pair(0, 2);
        run_for_ms(300);
        delivered_summaries = 0;
        CHECK(cluster_set_section(nodes[0], "doctor", doctor_of("ok")) == 0);
        run_for_ms(300);
        CHECK(delivered_summaries == 3);
        CHECK_STREQ(verdict_seen(2, 0, NULL, NULL), "ok");
        teardown();
}

struct names_seen {
        char text[256];
};

static void collect(const char *node_id, const char *name, uint64_t age, bool stale, void *userdata)
{
        struct names_seen *s = userdata;

        strcat(s->text, name);
        strcat(s->text, stale ? "(stale) " : " ");
}

static void test_a_silent_node_goes_stale_then_is_forgotten_and_a_restart_is_fresh(void)
{
        struct names_seen seen = { { 0 } };
        uint64_t age = 0;
        bool stale = false;

        setup_ring();
        CHECK(cluster_set_section(nodes[3], "doctor", doctor_of("warning")) == 0);
        run_for_ms(300);
        cluster_foreach_node(nodes[1], collect, &seen);
        CHECK_STREQ(seen.text, "spark2 spark1 spark3 spark4 ");

        /* spark4 dies: its neighbours lose it, nobody refreshes its summary. */
        disconnect_pair(3, 0);
        disconnect_pair(3, 2);
        cluster_free(nodes[3]);
        nodes[3] = NULL;
        run_for_ms(500);
        CHECK_STREQ(verdict_seen(1, 3, &age, &stale), "warning");
        CHECK(stale);
        CHECK(age >= 400000);
        seen.text[0] = '\0';
        cluster_foreach_node(nodes[1], collect, &seen);
        CHECK_STREQ(seen.text, "spark2 spark1 spark3 spark4(stale) ");

        /* Restarted: a new instance whose sequence starts again, fresh everywhere. */
        start_node(3);
        CHECK(cluster_set_section(nodes[3], "doctor", doctor_of("ok")) == 0);
        connect_pair(3, 0);
        connect_pair(3, 2);
        run_for_ms(300);
        CHECK_STREQ(verdict_seen(1, 3, &age, &stale), "ok");
        CHECK(!stale);

        /* Gone for longer than forget_after (2 s here): dropped. */
        disconnect_pair(3, 0);
        disconnect_pair(3, 2);
        run_for_ms(2600);
        CHECK(verdict_seen(1, 3, NULL, NULL) == NULL);
        CHECK(verdict_seen(2, 3, NULL, NULL) == NULL);
        teardown();
}

static json_object *summary_of(EVP_PKEY *key, const char *name, uint64_t seq, const char *pad)
{
        json_object *sections = json_object_new_object(), *digests, *m;
        char origin[33];

        CHECK(node_key_id(key, origin) == 0);
        json_object_object_add(sections, "doctor", doctor_of(pad ? pad : "failed"));
        digests = summary_digests(sections);
        m = summary_new(key, origin, name, "ffffffffffffffffffffffffffffffff", seq, 1000, sections, digests);
        json_object_put(digests);
        json_object_put(sections);
        return m;
}

/* A message of type whose body is text, signed by key as its origin would. */
static json_object *signed_of(EVP_PKEY *key, const char *type, const char *text)
{
        char public_hex[NODE_KEY_HEX_LEN + 1], sig[NODE_SIG_HEX_LEN + 1];
        json_object *m = json_object_new_object();

        CHECK(node_key_public_hex(key, public_hex) == 0);
        CHECK(node_key_sign(key, text, strlen(text), sig) == 0);
        json_object_object_add(m, "type", json_object_new_string(type));
        json_object_object_add(m, "body", json_object_new_string(text));
        json_object_object_add(m, "key", json_object_new_string(public_hex));
        json_object_object_add(m, "sig", json_object_new_string(sig));
        json_object_object_add(m, "age_ms", json_object_new_int(0));
        return m;
}

/* The string member key of o with from replaced by to. */
static void alter_text(json_object *o, const char *key, const char *from, const char *to)
{
        const char *text = json_object_get_string(json_object_object_get(o, key));
        const char *at = strstr(text, from);
        char *altered;

        CHECK(at != NULL);
        if (!at)
                return;
        CHECK(asprintf(&altered, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from)) > 0);
        json_object_object_add(o, key, json_object_new_string(altered));
        free(altered);
}

/* m with its body's text replaced (the signature kept). */
static void alter_body(json_object *m, const char *from, const char *to)
{
        alter_text(m, "body", from, to);
}

/* A summary body of the far node with the fields given after its common ones, signed by its
 * key, as spark1 passes it to spark2: what spark2 makes of it. */
static int receive_far_body(const char *fields)
{
        char body[512];
        json_object *m;
        int r;

        snprintf(body, sizeof(body),
                 "{\"type\":\"cluster-summary\",\"origin\":\"%s\",\"name\":\"bad\","
                 "\"instance\":\"ffffffffffffffffffffffffffffffff\",\"seq\":1,\"uptime_ms\":1%s}",
                 far_id, fields);
        m = signed_of(far_key, "cluster-summary", body);
        r = cluster_receive(nodes[1], ids[0], m);
        json_object_put(m);
        return r;
}

static void test_hostile_summaries_are_refused_and_nothing_of_them_kept(void)
{
        char *big = malloc(SUMMARY_MAX_BYTES + 2), body[512], other_hex[NODE_KEY_HEX_LEN + 1];
        char digest[SUMMARY_DIGEST_LEN + 1];
        json_object *m;

        setup_ring();
        run_for_ms(100);
        uint64_t before = cluster_refused(nodes[1]);

        /* Claims the receiver's own id (with its key: a copy of its own summary). */
        m = summary_of(keys[1], "spark2", 99, NULL);
        CHECK(cluster_receive(nodes[1], ids[0], m) == -EPERM);
        json_object_put(m);
        CHECK(verdict_seen(1, 1, NULL, NULL) == NULL);
        /* The sender's own id with another name than its hello. */
        m = summary_of(keys[0], "impostor", 99, NULL);
        CHECK(cluster_receive(nodes[1], ids[0], m) == -EPERM);
        json_object_put(m);
        CHECK(verdict_seen(1, 0, NULL, NULL) == NULL);
        /* Too large. */
        memset(big, 'x', SUMMARY_MAX_BYTES + 1);
        big[SUMMARY_MAX_BYTES + 1] = '\0';
        m = summary_of(far_key, "big", 1, big);
        CHECK(cluster_receive(nodes[1], ids[0], m) == -EMSGSIZE);
        json_object_put(m);
        /* Malformed, though signed: no digests, a bad section name, the format before digests. */
        CHECK(receive_far_body(",\"format\":3") == -EBADMSG);
        CHECK(receive_far_body(
                      ",\"format\":3,\"digests\":{\"Not A Name\":\"00000000000000000000000000000000\"}") ==
              -EBADMSG);
        CHECK(receive_far_body(",\"format\":2,\"sections\":{\"doctor\":{}}") == -EBADMSG);
        /* A section's text altered on the way: its digest, signed, is another's. */
        m = summary_of(far_key, "far", 1, "warning");
        alter_text(json_object_object_get(m, "sections"), "doctor", "\"warning\"", "\"ok\"");
        CHECK(cluster_receive(nodes[1], ids[0], m) == -EBADMSG);
        json_object_put(m);
        /* A body altered after it was signed: a digest changed, the signature kept. */
        m = summary_of(far_key, "far", 1, "warning");
        alter_body(m, "\"name\":\"far\"", "\"name\":\"fat\"");
        CHECK(cluster_receive(nodes[1], ids[0], m) == -EBADMSG);
        json_object_put(m);
        /* A section carried that the body does not name, and one that is not JSON. */
        m = summary_of(far_key, "far", 1, "warning");
        json_object_object_add(json_object_object_get(m, "sections"), "extra", json_object_new_string("{}"));
        CHECK(cluster_receive(nodes[1], ids[0], m) == -EBADMSG);
        json_object_put(m);
        summary_digest("{x", 2, digest);
        snprintf(body, sizeof(body),
                 "{\"type\":\"cluster-summary\",\"format\":3,\"origin\":\"%s\",\"name\":\"bad\","
                 "\"instance\":\"ffffffffffffffffffffffffffffffff\",\"seq\":1,\"uptime_ms\":1,"
                 "\"digests\":{\"doctor\":\"%s\"}}",
                 far_id, digest);
        m = signed_of(far_key, "cluster-summary", body);
        json_object_object_add(m, "sections", json_tokener_parse("{\"doctor\":\"{x\"}"));
        CHECK(cluster_receive(nodes[1], ids[0], m) == -EBADMSG);
        json_object_put(m);
        /* Signed by a key that is not its origin's. */
        m = summary_of(far_key, "far", 1, "warning");
        CHECK(node_key_public_hex(many_keys[0], other_hex) == 0);
        json_object_object_add(m, "key", json_object_new_string(other_hex));
        CHECK(cluster_receive(nodes[1], ids[0], m) == -EBADMSG);
        json_object_put(m);
        /* A key cut short. */
        m = summary_of(far_key, "far", 1, "warning");
        CHECK(node_key_public_hex(far_key, other_hex) == 0);
        other_hex[NODE_KEY_HEX_LEN - 2] = '\0';
        json_object_object_add(m, "key", json_object_new_string(other_hex));
        CHECK(cluster_receive(nodes[1], ids[0], m) == -EBADMSG);
        json_object_put(m);
        /* An unsigned summary of the format before bodies. */
        m = json_tokener_parse("{\"type\":\"cluster-summary\",\"format\":1,\"origin\":"
                               "\"abababababababababababababababab\",\"name\":\"old\",\"instance\":"
                               "\"ffffffffffffffffffffffffffffffff\",\"seq\":1,\"age_ms\":0,\"uptime_ms\":1,"
                               "\"sections\":{}}");
        CHECK(cluster_receive(nodes[1], ids[0], m) == -EBADMSG);
        json_object_put(m);
        CHECK(verdict_held(1, far_id, NULL, NULL) == NULL);
        CHECK(cluster_refused(nodes[1]) == before + 13);

        /* A relayed one for another node is believed, and unknown fields travel with it. */
        m = summary_of(far_key, "far", 1, "warning");
        json_object_object_add(m, "from_the_future", json_object_new_int(7));
        CHECK(cluster_receive(nodes[1], ids[0], m) == 0);
        json_object_put(m);
        CHECK_STREQ(verdict_seen(1, 1, NULL, NULL) ? "" : "x", "x");
        CHECK(verdict_held(1, far_id, NULL, NULL) != NULL);
        /* spark1 is spark2's peer: a copy of its summary through another peer, however new, does
         * not replace what spark1 says itself. */
        m = summary_of(keys[0], "spark1", 1000000, "forged");
        CHECK(cluster_receive(nodes[1], ids[2], m) == 0);
        json_object_put(m);
        CHECK(verdict_seen(1, 0, NULL, NULL) == NULL);
        /* An older or equal sequence is not newer. */
        m = summary_of(far_key, "far", 1, "ok");
        CHECK(cluster_receive(nodes[1], ids[0], m) == 0);
        json_object_put(m);
        CHECK_STREQ(verdict_held(1, far_id, NULL, NULL), "warning");
        free(big);
        teardown();
}

/* Whether node at's view counts node_id as confirmed. */
static bool is_confirmed_at(int at, const char *node_id)
{
        json_object *view = cluster_nodes_to_json(nodes[at], false), *list = NULL;
        bool confirmed = false;

        json_object_object_get_ex(view, "nodes", &list);
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *n = json_object_array_get_idx(list, i), *v = NULL;

                json_object_object_get_ex(n, "node_id", &v);
                if (strcmp(json_object_get_string(v), node_id) == 0) {
                        json_object_object_get_ex(n, "confirmed", &v);
                        confirmed = json_object_get_boolean(v);
                }
        }
        json_object_put(view);
        return confirmed;
}

static void test_one_relay_brings_at_most_64_unconfirmed_nodes(void)
{
        char origin[33];
        json_object *m;

        setup_ring();
        /* Past the coalescing: every node's "peers" section has gone round. */
        run_for_ms(500);
        for (int i = 0; i < CLUSTER_MAX_NODES / 4; i++) {
                m = summary_of(many_keys[i], "many", 1, "ok");
                CHECK(cluster_receive(nodes[1], ids[0], m) == 0);
                json_object_put(m);
        }
        m = summary_of(far_key, "one-too-many", 1, "ok");
        CHECK(cluster_receive(nodes[1], ids[0], m) == -ENOSPC);
        json_object_put(m);
        CHECK(verdict_held(1, far_id, NULL, NULL) == NULL);
        /* Another relay has a share of its own. */
        m = summary_of(far_key, "one-too-many", 1, "ok");
        CHECK(cluster_receive(nodes[1], ids[2], m) == 0);
        json_object_put(m);
        CHECK_STREQ(verdict_held(1, far_id, NULL, NULL), "ok");
        /* The ring's far node is listed by both neighbours; the invented ones by none. */
        CHECK(is_confirmed_at(1, ids[3]));
        CHECK(is_confirmed_at(1, ids[0]));
        CHECK(node_key_id(many_keys[0], origin) == 0);
        CHECK(!is_confirmed_at(1, origin));
        teardown();
}

static void test_a_name_two_nodes_carry_is_reported(void)
{
        json_object *m, *clashes;
        char expected[256];

        setup_ring();
        run_for_ms(100);
        CHECK(cluster_name_is_unique(nodes[0], "spark2"));
        /* A node only a relay speaks of counts for nothing, its name included. */
        m = summary_of(far_key, "spark2", 1, "ok");
        CHECK(cluster_receive(nodes[0], ids[3], m) == 0);
        json_object_put(m);
        CHECK(cluster_name_is_unique(nodes[0], "spark2"));
        /* The ring's far node, which both neighbours vouch for, renamed to its neighbour's name. */
        snprintf(names[2], sizeof(names[2]), "spark2"); /* its hello says so too */
        cluster_configure(nodes[2], "spark2", 100000, 2000000);
        run_for_ms(500);
        CHECK(!cluster_name_is_unique(nodes[0], "spark2"));
        CHECK(cluster_name_count(nodes[0], "spark2") == 2);
        clashes = cluster_name_clashes(nodes[0]);
        snprintf(expected, sizeof(expected), "[{\"name\":\"spark2\",\"node_ids\":[\"%s\",\"%s\"]}]",
                 strcmp(ids[1], ids[2]) < 0 ? ids[1] : ids[2], strcmp(ids[1], ids[2]) < 0 ? ids[2] : ids[1]);
        CHECK_STREQ(json_object_to_json_string_ext(clashes, JSON_C_TO_STRING_PLAIN), expected);
        json_object_put(clashes);
        teardown();
}

static void test_an_oversized_own_summary_is_not_sent(void)
{
        char *big = malloc(SUMMARY_MAX_BYTES + 1);
        json_object *d = doctor_of("failed");

        setup_ring();
        CHECK(cluster_set_section(nodes[0], "doctor", doctor_of("ok")) == 0);
        run_for_ms(250);
        CHECK_STREQ(verdict_seen(1, 0, NULL, NULL), "ok");
        memset(big, 'x', SUMMARY_MAX_BYTES);
        big[SUMMARY_MAX_BYTES] = '\0';
        json_object_object_add(d, "pad", json_object_new_string(big));
        CHECK(cluster_set_section(nodes[0], "doctor", d) == 0);
        run_for_ms(250);
        /* The peers keep the previous summary, refreshed no more: it goes stale. */
        CHECK_STREQ(verdict_seen(1, 0, NULL, NULL), "ok");
        CHECK(cluster_refused(nodes[1]) == 0);
        CHECK(cluster_set_section(nodes[0], "doctor", doctor_of("warning")) == 0);
        run_for_ms(250);
        CHECK_STREQ(verdict_seen(1, 0, NULL, NULL), "warning");
        free(big);
        teardown();
}

/* Whether a and b print as the same JSON: a node's own sections are objects, another's the
 * text they came as, and only what a client reads is to be the same. */
static bool printed_equal(json_object *a, json_object *b)
{
        json_object *x = json_tokener_parse(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN));
        json_object *y = json_tokener_parse(json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN));
        bool is_equal = x && y && json_object_equal(x, y);

        json_object_put(x);
        json_object_put(y);
        return is_equal;
}

static json_object *rtt_results(const char *peer_index_id, const char *peer_name, const char *median)
{
        char text[512];

        snprintf(text, sizeof(text),
                 "[{\"peer_id\":\"%s\",\"peer\":\"%s\",\"kind\":\"rtt\",\"at\":\"T1\","
                 "\"verdict\":\"ok\",\"rtt_median_us\":%s}]",
                 peer_index_id, peer_name, median);
        return json_tokener_parse(text);
}

static void test_the_json_is_the_same_on_every_node(void)
{
        json_object *a, *b;

        setup_ring();
        for (int i = 0; i < N; i++)
                CHECK(cluster_set_section(nodes[i], "doctor", doctor_of(i == 2 ? "failed" : "ok")) == 0);
        CHECK(cluster_set_section(nodes[1], "results", rtt_results(ids[2], names[2], "41.50")) == 0);
        run_for_ms(400);
        a = cluster_nodes_to_json(nodes[0], true);
        b = cluster_nodes_to_json(nodes[2], true);
        CHECK(json_object_array_length(json_object_object_get(a, "nodes")) == N);
        for (size_t i = 0; i < N; i++) {
                json_object *x = json_object_array_get_idx(json_object_object_get(a, "nodes"), i);
                json_object *y = json_object_array_get_idx(json_object_object_get(b, "nodes"), i);

                CHECK_STREQ(json_object_get_string(json_object_object_get(x, "name")), names[i]);
                CHECK(printed_equal(json_object_object_get(x, "sections"),
                                    json_object_object_get(y, "sections")));
                CHECK(json_object_equal(json_object_object_get(x, "instance"),
                                        json_object_object_get(y, "instance")));
        }
        json_object_put(a);
        json_object_put(b);
        /* Without results, those sections are left out and the others kept. */
        a = cluster_nodes_to_json(nodes[0], true);
        b = cluster_nodes_to_json(nodes[0], false);
        for (size_t i = 0; i < N; i++) {
                json_object *x = json_object_array_get_idx(json_object_object_get(a, "nodes"), i);
                json_object *y = json_object_array_get_idx(json_object_object_get(b, "nodes"), i);

                x = json_object_object_get(x, "sections");
                y = json_object_object_get(y, "sections");
                CHECK(json_object_object_get_ex(x, "results", NULL) == (i == 1));
                CHECK(!json_object_object_get_ex(y, "results", NULL));
                CHECK(json_object_object_length(x) == json_object_object_length(y) + (i == 1));
                CHECK(json_object_object_get_ex(y, "doctor", NULL));
        }
        json_object_put(a);
        json_object_put(b);
        teardown();
}

/* The rtt median in node of's results section as node at holds it; -1 when it holds none. */
static int median_held(int at, int of)
{
        json_object *r = cluster_get_section(nodes[at], ids[of], "results", NULL, NULL);
        int median = -1;

        if (r && json_object_array_length(r) == 1)
                median = json_object_get_int(
                        json_object_object_get(json_object_array_get_idx(r, 0), "rtt_median_us"));
        json_object_put(r);
        return median;
}

/* Results set lazily go at once after a quiet spell, then wait out CLUSTER_LAZY_USEC since that
 * send, with alives meanwhile; any other change takes them along at once. */
static void test_results_in_a_burst_wait_their_turn(void)
{
        bool stale = true;

        setup_ring();
        run_for_ms(300);
        CHECK(cluster_set_section_lazily(nodes[0], "results", rtt_results(ids[1], names[1], "10")) == 0);
        run_for_ms(300);
        CHECK(median_held(2, 0) == 10);
        CHECK(cluster_set_section_lazily(nodes[0], "results", rtt_results(ids[1], names[1], "20")) == 0);
        run_for_ms(1000);
        CHECK(median_held(1, 0) == 10);
        CHECK(median_held(2, 0) == 10);
        /* Alives kept its summary fresh meanwhile. */
        json_object_put(cluster_get_section(nodes[2], ids[0], "peers", NULL, &stale));
        CHECK(!stale);
        CHECK(cluster_set_section(nodes[0], "doctor", doctor_of("failed")) == 0);
        run_for_ms(300);
        CHECK(median_held(2, 0) == 20);
        CHECK_STREQ(verdict_seen(2, 0, NULL, NULL), "failed");
        /* The doctor's send was not for results alone: the next results wait for the first's. */
        CHECK(cluster_set_section_lazily(nodes[0], "results", rtt_results(ids[1], names[1], "30")) == 0);
        run_for_ms((int)(CLUSTER_LAZY_USEC / 1000) - 2500);
        CHECK(median_held(2, 0) == 20);
        run_for_ms(1500);
        CHECK(median_held(2, 0) == 30);
        teardown();
}

static char *links_text(int i)
{
        json_object *links = cluster_links_to_json(nodes[i]);
        char *text = strdup(json_object_to_json_string_ext(links, JSON_C_TO_STRING_PLAIN));

        json_object_put(links);
        return text;
}

/* The links view is the same text on every node, kept while nothing changes, made again after
 * (no more than once a second). */
static void test_the_links_view_follows_changes(void)
{
        char *a, *b, *again;

        setup_ring();
        CHECK(cluster_set_section(nodes[0], "results", rtt_results(ids[1], names[1], "41.50")) == 0);
        run_for_ms(400);
        a = links_text(0);
        b = links_text(2);
        CHECK_STREQ(a, b);
        CHECK(strstr(a, "\"value\":41.50") != NULL);
        again = links_text(2);
        CHECK_STREQ(again, b);
        free(again);
        free(b);
        /* The same section again is no change; another value is, shown once the view made
         * before it is a second old (a client asking more often has that one). */
        CHECK(cluster_set_section(nodes[0], "results", rtt_results(ids[1], names[1], "41.50")) == 0);
        CHECK(cluster_set_section(nodes[0], "results", rtt_results(ids[1], names[1], "97")) == 0);
        run_for_ms(400);
        b = links_text(2);
        CHECK(strstr(b, "\"value\":41.50") != NULL);
        free(b);
        run_for_ms(700);
        b = links_text(2);
        CHECK(strstr(b, "\"value\":97") != NULL);
        free(a);
        a = links_text(0);
        CHECK_STREQ(a, b);
        free(a);
        free(b);
        teardown();
}

/* Results may lag in the links view, a node gone stale may not: what it measured shows as
 * stale at once, within the second a change of results waits. */
static void test_the_links_view_shows_a_stale_node_at_once(void)
{
        char *a;

        setup_ring();
        CHECK(cluster_set_section(nodes[0], "results", rtt_results(ids[1], names[1], "41.50")) == 0);
        run_for_ms(400);
        a = links_text(2);
        CHECK(strstr(a, "\"measured_by\":\"spark1\",\"stale\":false") != NULL);
        free(a);
        disconnect_pair(0, 1);
        disconnect_pair(0, 3);
        cluster_free(nodes[0]);
        nodes[0] = NULL;
        run_for_ms(500);
        a = links_text(2);
        CHECK(strstr(a, "\"measured_by\":\"spark1\",\"stale\":true") != NULL);
        free(a);
        teardown();
}

static char *alerts_text(int i)
{
        json_object *nodes_json = cluster_nodes_to_json(nodes[i], false);
        json_object *alerts = cluster_alerts_to_json(nodes[i], json_object_object_get(nodes_json, "nodes"));
        char *text = strdup(json_object_to_json_string_ext(alerts, JSON_C_TO_STRING_PLAIN));

        json_object_put(alerts);
        json_object_put(nodes_json);
        return text;
}

static json_object *one_alert(const char *summary)
{
        char text[256];

        snprintf(text, sizeof(text),
                 "[{\"id\":\"link-down\",\"status\":\"error\",\"subject\":\"f0\",\"summary\":\"%s\","
                 "\"since\":\"T1\"}]",
                 summary);
        return json_tokener_parse(text);
}

/* The alerts view is kept as text while nothing changes, made again after: a changed alert
 * shows at the next call. */
static void test_the_alerts_view_follows_changes(void)
{
        char *a, *b;

        setup_ring();
        CHECK(cluster_set_section(nodes[0], "alerts", one_alert("f0 is down")) == 0);
        run_for_ms(400);
        a = alerts_text(2);
        CHECK(strstr(a, "\"summary\":\"f0 is down\"") != NULL);
        CHECK(strstr(a, "\"stale\":false") != NULL);
        b = alerts_text(2);
        CHECK_STREQ(a, b);
        free(a);
        free(b);
        CHECK(cluster_set_section(nodes[0], "alerts", one_alert("f0 is down again")) == 0);
        run_for_ms(400);
        a = alerts_text(2);
        CHECK(strstr(a, "\"summary\":\"f0 is down again\"") != NULL);
        free(a);
        teardown();
}

static void test_summary_parse_bounds(void)
{
        struct summary s;
        char why[256], body[512];
        const char *dup = "{\"type\":\"cluster-summary\",\"type\":\"x\"}";
        const char *text;
        json_object *m;

        snprintf(body, sizeof(body),
                 "{\"type\":\"cluster-summary\",\"format\":9,\"origin\":\"%s\",\"name\":\"n\",\"instance\":"
                 "\"0123456789abcdef0123456789abcdef\",\"seq\":1,\"uptime_ms\":5,\"digests\":{},\"new\":[1]"
                 "}",
                 far_id);
        m = signed_of(far_key, "cluster-summary", body);
        text = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN);
        CHECK(summary_parse(text, strlen(text), &s, why, sizeof(why)) == 0);
        CHECK(s.format == 9);
        summary_clear(&s);
        json_object_put(s.msg);
        json_object_put(m);
        CHECK(summary_parse(dup, strlen(dup), &s, why, sizeof(why)) == -EBADMSG);
        CHECK(summary_parse("[", 1, &s, why, sizeof(why)) == -EBADMSG);
        /* A body that names another type than its envelope: an alive's signature is not a
         * summary's. */
        m = summary_new_alive(far_key, far_id, "n", "0123456789abcdef0123456789abcdef", 1, 5);
        json_object_object_add(m, "type", json_object_new_string("cluster-summary"));
        text = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN);
        CHECK(summary_parse(text, strlen(text), &s, why, sizeof(why)) == -EBADMSG);
        json_object_put(m);
}

static void test_keys_sign_and_verify(void)
{
        char pub[NODE_KEY_HEX_LEN + 1], sig[NODE_SIG_HEX_LEN + 1], id[33], priv[NODE_KEY_HEX_LEN + 1];
        EVP_PKEY *again;

        CHECK(node_key_public_hex(far_key, pub) == 0);
        CHECK(node_key_sign(far_key, "text", 4, sig) == 0);
        CHECK(node_key_verify(pub, "text", 4, sig) == 0);
        CHECK(node_key_verify(pub, "texT", 4, sig) == -EKEYREJECTED);
        sig[0] = sig[0] == '0' ? '1' : '0';
        CHECK(node_key_verify(pub, "text", 4, sig) == -EKEYREJECTED);
        sig[5] = 'X';
        CHECK(node_key_verify(pub, "text", 4, sig) == -EBADMSG);
        pub[10] = '\0';
        CHECK(node_key_verify(pub, "text", 4, sig) == -EBADMSG);
        CHECK(node_key_id_of(pub, id) == -EBADMSG);
        /* The id is the key's, and the private key read back is the same key. */
        CHECK(node_key_private_hex(far_key, priv) == 0);
        again = node_key_from_private_hex(priv, strlen(priv));
        CHECK(again && node_key_id(again, id) == 0);
        CHECK_STREQ(id, far_id);
        EVP_PKEY_free(again);
        CHECK(node_key_from_private_hex("00", 2) == NULL);
}

/* A link that comes up between two nodes that hold every node gets their own summaries and an
 * offer each, nothing more: pushed, each would have sent the two others it holds as well. */
static void test_a_peer_that_comes_up_is_offered_what_is_held(void)
{
        setup_ring();
        run_for_ms(400);
        /* No refresh of their own in the window measured: it would send the change at once. */
        for (int i = 0; i < N; i++)
                cluster_set_refresh_external(nodes[i], true);
        delivered_summaries = delivered_offers = delivered_wants = 0;
        connect_pair(0, 2);
        run_for_ms(20);
        CHECK(delivered_summaries == 2);
        CHECK(delivered_offers == 2);
        CHECK(delivered_wants == 0);
        teardown();
}

static json_object *offer_of(const char *entries)
{
        char text[4096];

        snprintf(text, sizeof(text), "{\"type\":\"cluster-offer\",\"nodes\":[%s]}", entries);
        return json_tokener_parse(text);
}

/* Entries an offer may not carry: a sequence of 0, a negative or textual age, an instance that is
 * not an id, three fields, an object. */
#define BAD_OFFER_ENTRIES 6
static void bad_offer_entry(int i, const char *id, char *buf, size_t size)
{
        switch (i) {
        case 0:
                snprintf(buf, size, "[\"%s\",\"%s\",0,0]", id, id);
                break;
        case 1:
                snprintf(buf, size, "[\"%s\",\"%s\",1,-1]", id, id);
                break;
        case 2:
                snprintf(buf, size, "[\"%s\",\"%s\",1,\"0\"]", id, id);
                break;
        case 3:
                snprintf(buf, size, "[\"%s\",\"nothex\",1,0]", id);
                break;
        case 4:
                snprintf(buf, size, "[\"%s\",\"%s\",1]", id, id);
                break;
        default:
                snprintf(buf, size, "{\"origin\":\"%s\"}", id);
                break;
        }
}

/* An offer asks once per peer for what is not held, however often that peer offers it within a
 * refresh; one that is not a list of valid entries is refused whole and asks for nothing. */
static void test_an_offer_asks_once_and_a_bad_one_is_refused(void)
{
        char entry[160], many[CLUSTER_MAX_NODES * 2 + 64];
        uint64_t refused;
        json_object *m;

        setup_ring();
        run_for_ms(400);
        delivered_wants = 0;
        snprintf(entry, sizeof(entry), "[\"%s\",\"%s\",5,0]", far_id, far_id);
        m = offer_of(entry);
        CHECK(cluster_receive_message(nodes[0], ids[1], m) == 0);
        json_object_put(m);
        m = offer_of(entry);
        CHECK(cluster_receive_message(nodes[0], ids[1], m) == 0);
        json_object_put(m);
        run_for_ms(5);
        CHECK(delivered_wants == 1);
        /* Another peer is asked too: one that offers what it does not answer keeps nothing
         * from the node. */
        m = offer_of(entry);
        CHECK(cluster_receive_message(nodes[0], ids[3], m) == 0);
        json_object_put(m);
        run_for_ms(5);
        CHECK(delivered_wants == 2);
        /* What is held at that sequence, this node and the offering peer are not asked for. */
        snprintf(many, sizeof(many), "[\"%s\",\"%s\",1,0],[\"%s\",\"%s\",9,0]", ids[0], ids[0], ids[1],
                 ids[1]);
        m = offer_of(many);
        CHECK(cluster_receive_message(nodes[0], ids[1], m) == 0);
        json_object_put(m);
        run_for_ms(5);
        CHECK(delivered_wants == 2);
        refused = cluster_refused(nodes[0]);
        for (int i = 0; i < BAD_OFFER_ENTRIES; i++) {
                char text[256];

                bad_offer_entry(i, ids[2], text, sizeof(text));
                /* A good entry first: a bad one later still refuses the whole offer. */
                snprintf(many, sizeof(many), "[\"%s\",\"%s\",99,0],%s", ids[2], ids[2], text);
                m = offer_of(many);
                CHECK(m != NULL);
                CHECK(cluster_receive_message(nodes[0], ids[1], m) == -EBADMSG);
                json_object_put(m);
        }
        /* More entries than the view holds nodes. */
        many[0] = '\0';
        for (size_t i = 0; i <= CLUSTER_MAX_NODES; i++)
                strcat(many, i ? ",0" : "0");
        m = offer_of(many);
        CHECK(cluster_receive_message(nodes[0], ids[1], m) == -EBADMSG);
        json_object_put(m);
        run_for_ms(5);
        CHECK(cluster_refused(nodes[0]) == refused + BAD_OFFER_ENTRIES + 1);
        CHECK(delivered_wants == 2);
        teardown();
}

/* A section of some 4 KiB: text that is sent only when it changes. */
static json_object *bulky(void)
{
        json_object *list = json_object_new_array();

        for (int i = 0; i < 64; i++)
                json_object_array_add(list, json_object_new_string("a result of some sixty bytes, as text"));
        return list;
}

/* A change carries the section that changed, not the others: the bulky section crosses once. */
static void test_a_change_carries_only_what_changed(void)
{
        longest_summary_0_to_1 = 0;
        setup_ring();
        CHECK(cluster_set_section(nodes[0], "bulky", bulky()) == 0);
        run_for_ms(400);
        CHECK(longest_summary_0_to_1 > 2048);
        longest_summary_0_to_1 = 0;
        CHECK(cluster_set_section(nodes[0], "doctor", doctor_of("failed")) == 0);
        run_for_ms(300);
        CHECK(longest_summary_0_to_1 > 0 && longest_summary_0_to_1 < 2048);
        for (int i = 1; i < N; i++) {
                json_object *b = cluster_get_section(nodes[i], ids[0], "bulky", NULL, NULL);

                CHECK_STREQ(verdict_seen(i, 0, NULL, NULL), "failed");
                CHECK(b && json_object_array_length(b) == 64);
                json_object_put(b);
        }
        teardown();
}

/* A node that missed a change gets the next as a change it cannot complete, and asks for the
 * whole summary: nothing of what it missed stays missing. */
static void test_a_missed_change_is_asked_for_whole(void)
{
        setup_ring();
        for (int i = 0; i < N; i++)
                cluster_set_refresh_external(nodes[i], true);
        run_for_ms(400);
        /* spark2 does not get the first change (the link drops it, both ends still up). */
        link_up[0][1] = false;
        CHECK(cluster_set_section(nodes[0], "doctor", doctor_of("failed")) == 0);
        run_for_ms(250);
        link_up[0][1] = true;
        CHECK(verdict_seen(1, 0, NULL, NULL) == NULL);
        delivered_wants = 0;
        CHECK(cluster_set_section(nodes[0], "bulky", bulky()) == 0);
        run_for_ms(250);
        CHECK(delivered_wants >= 1);
        CHECK_STREQ(verdict_seen(1, 0, NULL, NULL), "failed");
        teardown();
}

/* In a ring the far node hears each alive through one of its two neighbours, the one of the
 * lower id, not through both: each node sends its own two alives a refresh, and the designated
 * neighbour two relays more. */
static void test_a_far_node_hears_each_alive_once(void)
{
        int low, high;

        setup_ring();
        run_for_ms(500);
        memset(alives_from, 0, sizeof(alives_from));
        run_for_ms(1000);
        low = strcmp(ids[1], ids[3]) < 0 ? 1 : 3;
        high = low == 1 ? 3 : 1;
        CHECK(alives_from[high] >= 2 * 8 && alives_from[high] <= 2 * 11);
        CHECK(alives_from[low] >= 4 * 8 && alives_from[low] <= 4 * 11);
        /* Kept fresh all the same. */
        {
                bool stale = true;

                json_object_put(cluster_get_section(nodes[2], ids[0], "peers", NULL, &stale));
                CHECK(!stale);
        }
        teardown();
}

/* Over the budget, results wait (the nodes look again every second) while a change that may not
 * wait goes at once and takes them along; back under it, what waited goes. */
static void test_results_wait_for_the_budget(void)
{
        setup_ring();
        run_for_ms(400);
        over_budget = true;
        budget_asked = 0;
        CHECK(cluster_set_section_lazily(nodes[0], "results", rtt_results(ids[1], names[1], "10")) == 0);
        run_for_ms(600);
        CHECK(budget_asked > 0);
        CHECK(median_held(1, 0) == -1);
        CHECK(cluster_set_section(nodes[0], "doctor", doctor_of("failed")) == 0);
        run_for_ms(300);
        CHECK(median_held(1, 0) == 10);
        CHECK_STREQ(verdict_seen(1, 0, NULL, NULL), "failed");
        CHECK(cluster_set_section_lazily(nodes[0], "results", rtt_results(ids[1], names[1], "20")) == 0);
        run_for_ms(600);
        CHECK(median_held(1, 0) == 10);
        over_budget = false;
        run_for_ms(1300);
        CHECK(median_held(1, 0) == 20);
        teardown();
}

/* An array that changes in one element goes as that element (a splice from the text held), and
 * every node holds the whole new array; a splice that does not make the text its digest names
 * is refused, and one from a text not held asks for the whole. */
static void test_an_array_changes_by_its_elements(void)
{
        json_object *list, *held, *m, *sections, *digests;
        char origin[33];

        setup_ring();
        CHECK(cluster_set_section(nodes[0], "bulky", bulky()) == 0);
        run_for_ms(400);
        list = bulky();
        json_object_array_put_idx(list, 10, json_object_new_string("a new result"));
        longest_summary_0_to_1 = 0;
        CHECK(cluster_set_section(nodes[0], "bulky", list) == 0);
        run_for_ms(300);
        CHECK(longest_summary_0_to_1 > 0 && longest_summary_0_to_1 < 1024);
        for (int i = 1; i < N; i++) {
                held = cluster_get_section(nodes[i], ids[0], "bulky", NULL, NULL);
                CHECK(held && json_object_array_length(held) == 64);
                CHECK_STREQ(json_object_get_string(json_object_array_get_idx(held, 10)), "a new result");
                CHECK_STREQ(json_object_get_string(json_object_array_get_idx(held, 11)),
                            "a result of some sixty bytes, as text");
                json_object_put(held);
        }
        /* A splice whose text is not the digest's, from a node only relays speak of. */
        CHECK(node_key_id(far_key, origin) == 0);
        sections = json_object_new_object();
        json_object_object_add(sections, "bulky", bulky());
        digests = summary_digests(sections);
        m = summary_new(far_key, origin, "far", "ffffffffffffffffffffffffffffffff", 1, 1000, sections,
                        digests);
        CHECK(cluster_receive(nodes[1], ids[0], m) == 0);
        json_object_put(m);
        m = summary_new(far_key, origin, "far", "ffffffffffffffffffffffffffffffff", 2, 1000, sections,
                        digests);
        json_object_object_add(json_object_object_get(m, "sections"), "bulky",
                               json_tokener_parse("{\"from\":\"00000000000000000000000000000000\",\"at\":0,"
                                                  "\"drop\":1,\"add\":\"[1]\"}"));
        memset(wants_from, 0, sizeof(wants_from));
        CHECK(cluster_receive(nodes[1], ids[0], m) == 0);
        json_object_put(m);
        run_for_ms(5);
        CHECK(wants_from[1] == 1);
        m = summary_new(far_key, origin, "far", "ffffffffffffffffffffffffffffffff", 3, 1000, sections,
                        digests);
        json_object_object_add(json_object_object_get(m, "sections"), "bulky",
                               json_tokener_parse("{\"from\":\"00000000000000000000000000000000\",\"at\":0,"
                                                  "\"drop\":1,\"add\":\"[1]\"}"));
        json_object_object_add(
                json_object_object_get(json_object_object_get(m, "sections"), "bulky"), "from",
                json_object_new_string(json_object_get_string(json_object_object_get(digests, "bulky"))));
        CHECK(cluster_receive(nodes[1], ids[0], m) == -EBADMSG);
        json_object_put(m);
        json_object_put(digests);
        json_object_put(sections);
        teardown();
}

int main(void)
{
        far_key = node_key_generate();
        CHECK(node_key_id(far_key, far_id) == 0);
        for (size_t i = 0; i < CLUSTER_MAX_NODES / 4; i++)
                many_keys[i] = node_key_generate();
        RUN(test_keys_sign_and_verify);
        RUN(test_a_change_reaches_the_opposite_node_through_a_relay);
        RUN(test_refreshes_end_and_cost_a_few_messages_per_origin);
        RUN(test_a_mesh_at_rest_sends_alives_only);
        RUN(test_an_external_refresh_sends_on_each_call_only);
        RUN(test_a_mesh_that_loses_a_link_relays_round_it);
        RUN(test_a_silent_node_goes_stale_then_is_forgotten_and_a_restart_is_fresh);
        RUN(test_hostile_summaries_are_refused_and_nothing_of_them_kept);
        RUN(test_one_relay_brings_at_most_64_unconfirmed_nodes);
        RUN(test_a_name_two_nodes_carry_is_reported);
        RUN(test_an_oversized_own_summary_is_not_sent);
        RUN(test_the_json_is_the_same_on_every_node);
        RUN(test_results_in_a_burst_wait_their_turn);
        RUN(test_the_links_view_follows_changes);
        RUN(test_the_links_view_shows_a_stale_node_at_once);
        RUN(test_the_alerts_view_follows_changes);
        RUN(test_summary_parse_bounds);
        RUN(test_a_peer_that_comes_up_is_offered_what_is_held);
        RUN(test_an_offer_asks_once_and_a_bad_one_is_refused);
        RUN(test_a_change_carries_only_what_changed);
        RUN(test_a_missed_change_is_asked_for_whole);
        RUN(test_a_far_node_hears_each_alive_once);
        RUN(test_results_wait_for_the_budget);
        RUN(test_an_array_changes_by_its_elements);
        return test_result();
}
