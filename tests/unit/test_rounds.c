#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/probe/rounds.h"
#include "test.h"

#define ID_LEN    32
#define MAX_NODES 64

/* A fixed-seed generator: the ids are random but every run sees the same ones. */
static uint64_t rng_state = 0x5eed5eed12345678ULL;

static uint64_t rng(void)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

static void random_ids(char ids[][ID_LEN + 1], size_t n)
{
        for (size_t i = 0; i < n; i++) {
                for (size_t k = 0; k < ID_LEN; k++)
                        ids[i][k] = "0123456789abcdef"[rng() % 16];
                ids[i][ID_LEN] = '\0';
        }
}

static void shuffle(char **v, size_t n)
{
        for (size_t i = n; i > 1; i--) {
                size_t j = rng() % i;
                char *t = v[i - 1];

                v[i - 1] = v[j];
                v[j] = t;
        }
}

static size_t index_of(char ids[][ID_LEN + 1], size_t n, const char *id)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(ids[i], id) == 0)
                        return i;
        return SIZE_MAX;
}

static bool same_schedule(const struct rounds *a, const struct rounds *b)
{
        struct rounds_pair pa[MAX_NODES], pb[MAX_NODES];

        if (rounds_count(a) != rounds_count(b))
                return false;
        for (size_t r = 0; r < rounds_count(a); r++) {
                size_t na = rounds_pairs(a, r, pa, MAX_NODES), nb = rounds_pairs(b, r, pb, MAX_NODES);

                if (na != nb)
                        return false;
                for (size_t k = 0; k < na; k++)
                        if (strcmp(pa[k].initiator, pb[k].initiator) != 0 ||
                            strcmp(pa[k].responder, pb[k].responder) != 0)
                                return false;
        }
        return true;
}

/* Everything the schedule promises, for n random nodes. */
static void check_schedule(size_t n)
{
        static char ids[MAX_NODES][ID_LEN + 1];
        static unsigned met[MAX_NODES][MAX_NODES];
        char *argv[2 * MAX_NODES];
        struct rounds *s = NULL, *shuffled = NULL, *doubled = NULL;
        size_t rounds;

        random_ids(ids, n);
        memset(met, 0, sizeof(met));
        for (size_t i = 0; i < n; i++)
                argv[i] = ids[i];
        CHECK(rounds_build(argv, n, &s) == 0);
        rounds = rounds_count(s);
        CHECK(rounds == (n % 2 ? n : n - 1));

        for (size_t r = 0; r < rounds; r++) {
                struct rounds_pair pairs[MAX_NODES];
                bool busy[MAX_NODES] = { false };
                size_t np = rounds_pairs(s, r, pairs, MAX_NODES), idle = 0;

                CHECK(np == n / 2);
                CHECK(rounds_pairs(s, r, NULL, 0) == np);
                for (size_t k = 0; k < np; k++) {
                        size_t a = index_of(ids, n, pairs[k].initiator),
                               b = index_of(ids, n, pairs[k].responder);

                        CHECK(a < n && b < n && a != b);
                        if (a >= n || b >= n)
                                continue;
                        CHECK(strcmp(pairs[k].initiator, pairs[k].responder) < 0);
                        CHECK(!busy[a] && !busy[b]); /* no node in two pairs of a round */
                        busy[a] = busy[b] = true;
                        met[a][b]++;
                        met[b][a]++;
                }
                for (size_t i = 0; i < n; i++) {
                        const char *partner = NULL;
                        bool is_initiator = false;
                        int rc = rounds_partner(s, r, ids[i], &partner, &is_initiator);

                        if (!busy[i]) {
                                CHECK(rc == -ENOENT);
                                idle++;
                                continue;
                        }
                        CHECK(rc == 0);
                        /* rounds_partner names the pair rounds_pairs listed. */
                        for (size_t k = 0; rc == 0 && k < np; k++) {
                                if (strcmp(pairs[k].initiator, ids[i]) == 0) {
                                        CHECK(is_initiator);
                                        CHECK_STREQ(partner, pairs[k].responder);
                                } else if (strcmp(pairs[k].responder, ids[i]) == 0) {
                                        CHECK(!is_initiator);
                                        CHECK_STREQ(partner, pairs[k].initiator);
                                }
                        }
                }
                CHECK(idle == n % 2);
        }
        /* Every pair exactly once per cycle. */
        for (size_t a = 0; a < n; a++)
                for (size_t b = 0; b < n; b++)
                        CHECK(met[a][b] == (a == b ? 0u : 1u));

        /* Any input order, and duplicates, give the same schedule. */
        shuffle(argv, n);
        CHECK(rounds_build(argv, n, &shuffled) == 0);
        CHECK(same_schedule(s, shuffled));
        for (size_t i = 0; i < n; i++)
                argv[n + i] = ids[i];
        shuffle(argv, 2 * n);
        CHECK(rounds_build(argv, 2 * n, &doubled) == 0);
        CHECK(rounds_count(doubled) == rounds);
        CHECK(same_schedule(s, doubled));

        rounds_free(s);
        rounds_free(shuffled);
        rounds_free(doubled);
}

static void test_two_nodes(void)
{
        check_schedule(2);
}

static void test_triangle(void)
{
        check_schedule(3);
}

static void test_eight_nodes(void)
{
        check_schedule(8);
}

static void test_sixty_four_nodes(void)
{
        check_schedule(64);
}

/* The triangle mesh written out: each node sits out one round, the lower id starts. */
static void test_triangle_by_hand(void)
{
        char a[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", b[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
             c[] = "cccccccccccccccccccccccccccccccc";
        char *ids[] = { c, a, b };
        struct rounds *s = NULL;
        struct rounds_pair p[2];
        const char *partner = NULL;
        bool is_initiator = false;

        CHECK(rounds_build(ids, 3, &s) == 0);
        CHECK(rounds_count(s) == 3);
        CHECK(rounds_pairs(s, 0, p, 2) == 1);
        CHECK_STREQ(p[0].initiator, b);
        CHECK_STREQ(p[0].responder, c);
        CHECK(rounds_pairs(s, 1, p, 2) == 1);
        CHECK_STREQ(p[0].initiator, a);
        CHECK_STREQ(p[0].responder, c);
        CHECK(rounds_pairs(s, 2, p, 2) == 1);
        CHECK_STREQ(p[0].initiator, a);
        CHECK_STREQ(p[0].responder, b);
        CHECK(rounds_partner(s, 0, a, &partner, &is_initiator) == -ENOENT);
        CHECK(rounds_partner(s, 1, c, &partner, &is_initiator) == 0);
        CHECK_STREQ(partner, a);
        CHECK(!is_initiator);
        CHECK(rounds_pairs(s, 3, p, 2) == 0);
        CHECK(rounds_partner(s, 3, a, &partner, &is_initiator) == -EINVAL);
        CHECK(rounds_partner(s, 0, "dddddddddddddddddddddddddddddddd", &partner, &is_initiator) == -ESRCH);
        rounds_free(s);
}

/* The schedule keeps its own copies: the caller's strings may go away. */
static void test_ids_are_copied(void)
{
        char *ids[2] = { strdup("ffffffffffffffffffffffffffffffff"),
                         strdup("00000000000000000000000000000000") };
        struct rounds *s = NULL;
        struct rounds_pair p;

        CHECK(rounds_build(ids, 2, &s) == 0);
        free(ids[0]);
        free(ids[1]);
        CHECK(rounds_pairs(s, 0, &p, 1) == 1);
        CHECK_STREQ(p.initiator, "00000000000000000000000000000000");
        CHECK_STREQ(p.responder, "ffffffffffffffffffffffffffffffff");
        rounds_free(s);
}

static void test_alone_and_invalid(void)
{
        char one[] = "0123456789abcdef0123456789abcdef";
        char *ids[] = { one, one, NULL };
        struct rounds *s = NULL;
        const char *partner = NULL;
        bool is_initiator;

        CHECK(rounds_build(ids, 0, &s) == -EINVAL);
        CHECK(rounds_build(ids, 3, &s) == -EINVAL);
        CHECK(rounds_build(ids, 2, &s) == 0); /* one node, given twice */
        CHECK(rounds_count(s) == 0);
        CHECK(rounds_pairs(s, 0, NULL, 0) == 0);
        CHECK(rounds_at(s, 12345, 60) == 0);
        CHECK(rounds_partner(s, 0, one, &partner, &is_initiator) == -EINVAL);
        rounds_free(s);
}

static void test_round_at_cycles(void)
{
        static char ids[5][ID_LEN + 1];
        char *argv[5];
        struct rounds *s = NULL;
        const uint64_t interval = 60, t0 = 1700000000;
        bool seen[5] = { false };

        random_ids(ids, 5);
        for (size_t i = 0; i < 5; i++)
                argv[i] = ids[i];
        CHECK(rounds_build(argv, 5, &s) == 0);
        CHECK(rounds_count(s) == 5);
        for (uint64_t t = t0; t < t0 + 20 * interval; t += 7) {
                size_t r = rounds_at(s, t, interval);

                CHECK(r == (t / interval) % 5);
                CHECK(rounds_at(s, t + 5 * interval, interval) == r);
                seen[r] = true;
        }
        /* Within an interval the round stays; the next interval moves on by one. */
        CHECK(rounds_at(s, 600, interval) == rounds_at(s, 659, interval));
        CHECK(rounds_at(s, 660, interval) == (rounds_at(s, 659, interval) + 1) % 5);
        for (size_t r = 0; r < 5; r++)
                CHECK(seen[r]);
        CHECK(rounds_at(s, t0, 0) == 0);
        rounds_free(s);
}

static void test_jitter(void)
{
        static char ids[MAX_NODES][ID_LEN + 1];
        bool used[60] = { false };
        size_t distinct = 0;

        random_ids(ids, MAX_NODES);
        for (size_t i = 0; i < MAX_NODES; i++)
                for (size_t j = i + 1; j < MAX_NODES; j++) {
                        uint64_t round = i + j, jit = rounds_jitter(ids[i], ids[j], round, 60);

                        CHECK(jit < 60);
                        CHECK(rounds_jitter(ids[j], ids[i], round, 60) == jit);
                        CHECK(rounds_jitter(ids[i], ids[j], round, 60) == jit);
                        used[jit] = true;
                }
        /* 2016 pairs over 60 seconds: a decent hash leaves no second unused. */
        for (size_t k = 0; k < 60; k++)
                distinct += used[k];
        CHECK(distinct == 60);
        /* The round moves a pair's start around too. */
        distinct = 0;
        memset(used, 0, sizeof(used));
        for (uint64_t r = 0; r < 200; r++)
                used[rounds_jitter(ids[0], ids[1], r, 60)] = true;
        for (size_t k = 0; k < 60; k++)
                distinct += used[k];
        CHECK(distinct > 40);
        CHECK(rounds_jitter(ids[0], ids[1], 7, 0) == 0);
        CHECK(rounds_jitter(ids[0], ids[1], 7, 1) == 0);
}

static void test_wait(void)
{
        const uint64_t hour = 3600, slot = 1000 * hour;

        /* Started before the slot: the jitter counts from the slot's start. */
        CHECK(rounds_wait(slot, hour, 300, slot - 10) == 300);
        CHECK(rounds_wait(slot + 299, hour, 300, slot - 10) == 1);
        CHECK(rounds_wait(slot + 300, hour, 300, slot - 10) == 0);
        CHECK(rounds_wait(slot + 2400, hour, 300, 0) == 0);
        CHECK(rounds_wait(slot + 5, hour, 0, slot - 10) == 0);
        /* Started 40 minutes into the slot: the pair waits its jitter from the start, not at once
         * as the slot's 300 s have long passed. */
        CHECK(rounds_wait(slot + 2400, hour, 300, slot + 2400) == 300);
        CHECK(rounds_wait(slot + 2500, hour, 300, slot + 2400) == 200);
        CHECK(rounds_wait(slot + 2700, hour, 300, slot + 2400) == 0);
        CHECK(rounds_wait(slot + 2400, hour, 0, slot + 2400) == 0);
        /* Too near the slot's end for the jitter: the next slot is looked at when it begins. */
        CHECK(rounds_wait(slot + 3500, hour, 300, slot + 3500) == 100);
        CHECK(rounds_wait(slot + 3599, hour, 300, slot + 3500) == 1);
        /* The next slot counts from its own start again. */
        CHECK(rounds_wait(slot + hour, hour, 300, slot + 3500) == 300);
        /* A start after now (a clock set back) is not waited for. */
        CHECK(rounds_wait(slot + 400, hour, 300, slot + 3000) == 0);
        CHECK(rounds_wait(slot + 400, 0, 300, slot) == 0);
}

/* 32 nodes, rtt every 5 minutes: each node's 31 rtt offsets (one per pair, the same from both
 * ends) and 62 pathmtu offsets (one per direction) lie in the round's first half, fixed from
 * round to round, and spread: no second of one node's round starts more than a few helpers. */
static void test_light_offsets(void)
{
        enum { N = 32 };
        const uint64_t interval = 300;
        char ids[N][33];
        bool all_same_direction = true;
        unsigned worst = 0;

        for (int i = 0; i < N; i++)
                snprintf(ids[i], sizeof(ids[i]), "%08x%024x", (unsigned)(i * 2654435761u), i);
        for (int i = 0; i < N; i++) {
                unsigned per_second[150] = { 0 };

                for (int j = 0; j < N; j++) {
                        uint64_t rtt, mtu, back;

                        if (i == j)
                                continue;
                        rtt = rounds_light_offset(ids[i], ids[j], "rtt", interval);
                        mtu = rounds_light_offset(ids[i], ids[j], "pathmtu", interval);
                        back = rounds_light_offset(ids[j], ids[i], "pathmtu", interval);
                        CHECK(rtt < interval / 2 && mtu < interval / 2);
                        CHECK(rtt == rounds_light_offset(ids[j], ids[i], "rtt", interval));
                        CHECK(mtu == rounds_light_offset(ids[i], ids[j], "pathmtu", interval));
                        all_same_direction = all_same_direction && mtu == back;
                        /* The probes this node starts: rtt to higher ids, pathmtu to every peer. */
                        if (strcmp(ids[i], ids[j]) < 0 && rtt < 150)
                                per_second[rtt]++;
                        if (mtu < 150)
                                per_second[mtu]++;
                }
                for (int t = 0; t < 150; t++)
                        worst = per_second[t] > worst ? per_second[t] : worst;
        }
        CHECK(!all_same_direction);
        printf("     at most %u of a node's helpers start in one second\n", worst);
        CHECK(worst <= 4);
        /* Below two seconds a round has no room to spread: all start with it. */
        CHECK(rounds_light_offset(ids[0], ids[1], "rtt", 1) == 0);
        CHECK(rounds_light_offset(ids[0], ids[1], "pathmtu", 0) == 0);
}

int main(void)
{
        RUN(test_two_nodes);
        RUN(test_triangle);
        RUN(test_eight_nodes);
        RUN(test_sixty_four_nodes);
        RUN(test_triangle_by_hand);
        RUN(test_ids_are_copied);
        RUN(test_alone_and_invalid);
        RUN(test_round_at_cycles);
        RUN(test_jitter);
        RUN(test_wait);
        RUN(test_light_offsets);
        return test_result();
}
