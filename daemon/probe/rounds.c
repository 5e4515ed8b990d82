/*
 * The circle method over n sorted ids. With an odd n a virtual "bye" makes the count even; call
 * the even count m. Position m-1 stays fixed and the others turn: in round r the fixed position
 * meets r, and for k = 1 .. m/2-1 position (r+k) meets (r-k), both mod m-1. Two positions i and
 * j meet in the round where i + j == 2r (mod m-1), which exists and is unique because m-1 is
 * odd; so each pair meets exactly once in m-1 rounds. The bye, when there is one, is the fixed
 * position, which makes node r the idle one in round r.
 */
#include "rounds.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/fnv1a.h"

struct rounds {
        size_t n;    /* distinct nodes */
        char *ids[]; /* n sorted ids, then their bytes in the same allocation */
};

static int cmp_id(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

int rounds_build(char *const *node_ids, size_t n, struct rounds **ret)
{
        const char **sorted;
        struct rounds *s;
        size_t distinct = 0, bytes = 0;
        char *p;

        if (n == 0 || n > SIZE_MAX / sizeof(char *) / 2)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!node_ids[i])
                        return -EINVAL;
        sorted = malloc(n * sizeof(*sorted));
        if (!sorted)
                return -ENOMEM;
        memcpy(sorted, node_ids, n * sizeof(*sorted));
        qsort(sorted, n, sizeof(*sorted), cmp_id);
        for (size_t i = 0; i < n; i++) {
                if (distinct > 0 && strcmp(sorted[distinct - 1], sorted[i]) == 0)
                        continue;
                sorted[distinct++] = sorted[i];
                bytes += strlen(sorted[i]) + 1;
        }
        s = malloc(sizeof(*s) + distinct * sizeof(char *) + bytes);
        if (!s) {
                free(sorted);
                return -ENOMEM;
        }
        s->n = distinct;
        p = (char *)&s->ids[distinct];
        for (size_t i = 0; i < distinct; i++) {
                size_t len = strlen(sorted[i]) + 1;

                s->ids[i] = memcpy(p, sorted[i], len);
                p += len;
        }
        free(sorted);
        *ret = s;
        return 0;
}

void rounds_free(struct rounds *s)
{
        free(s);
}

/* Positions in the circle: n rounded up to even (the bye is position n when n is odd). */
static size_t positions(const struct rounds *s)
{
        return s->n + (s->n & 1);
}

size_t rounds_count(const struct rounds *s)
{
        return s->n < 2 ? 0 : positions(s) - 1;
}

/* The position that meets position i in round r (both below m-1 = rounds, or i == m-1). */
static size_t opponent(size_t rounds, size_t round, size_t i)
{
        if (i == rounds)
                return round;
        if (i == round)
                return rounds;
        /* i + j == 2r (mod rounds); add rounds twice so the difference stays unsigned. */
        return (2 * round + 2 * rounds - i) % rounds;
}

/* Fills *pair when positions i and j are two real nodes; false when one of them is the bye. */
static bool make_pair(const struct rounds *s, size_t i, size_t j, struct rounds_pair *pair)
{
        if (i >= s->n || j >= s->n)
                return false;
        /* Sorted ids: the lower position is the lower id, the initiator. */
        *pair = (struct rounds_pair){ .initiator = s->ids[i < j ? i : j],
                                      .responder = s->ids[i < j ? j : i] };
        return true;
}

size_t rounds_pairs(const struct rounds *s, size_t round, struct rounds_pair *out, size_t max)
{
        size_t rounds = rounds_count(s), count = 0;
        struct rounds_pair pair;

        if (round >= rounds)
                return 0;
        /* k == 0 is the fixed position against position r. */
        for (size_t k = 0; k < positions(s) / 2; k++) {
                size_t i = k == 0 ? rounds : (round + k) % rounds;
                size_t j = k == 0 ? round : (round + rounds - k) % rounds;

                if (!make_pair(s, i, j, &pair))
                        continue;
                if (count < max)
                        out[count] = pair;
                count++;
        }
        return count;
}

int rounds_partner(const struct rounds *s, size_t round, const char *node_id, const char **partner,
                   bool *is_initiator)
{
        size_t rounds = rounds_count(s), i;
        const char **found;
        struct rounds_pair pair;

        if (round >= rounds)
                return -EINVAL;
        found = bsearch(&node_id, s->ids, s->n, sizeof(char *), cmp_id);
        if (!found)
                return -ESRCH;
        i = (size_t)((char **)found - s->ids);
        if (!make_pair(s, i, opponent(rounds, round, i), &pair))
                return -ENOENT;
        *is_initiator = pair.initiator == *found;
        *partner = *is_initiator ? pair.responder : pair.initiator;
        return 0;
}

size_t rounds_at(const struct rounds *s, uint64_t unix_time_sec, uint64_t interval_sec)
{
        size_t rounds = rounds_count(s);

        if (rounds == 0 || interval_sec == 0)
                return 0;
        return (size_t)((unix_time_sec / interval_sec) % rounds);
}

uint64_t rounds_jitter(const char *a, const char *b, uint64_t round_index, uint64_t max_jitter_sec)
{
        uint64_t h = FNV1A64_INIT;
        unsigned char idx[8];

        if (max_jitter_sec == 0)
                return 0;
        if (strcmp(a, b) > 0) {
                const char *t = a;

                a = b;
                b = t;
        }
        for (size_t i = 0; i < sizeof(idx); i++)
                idx[i] = (unsigned char)(round_index >> (8 * i));
        /* The NUL after each id keeps ("ab", "c") apart from ("a", "bc"). */
        h = fnv1a64(h, a, strlen(a) + 1);
        h = fnv1a64(h, b, strlen(b) + 1);
        h = fnv1a64(h, idx, sizeof(idx));
        /* splitmix64's finaliser: FNV's low bits alone spread poorly under a small modulus. */
        h ^= h >> 30;
        h *= 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 27;
        h *= 0x94d049bb133111ebULL;
        h ^= h >> 31;
        return h % max_jitter_sec;
}

uint64_t rounds_wait(uint64_t unix_time_sec, uint64_t interval_sec, uint64_t jitter_sec,
                     uint64_t started_sec)
{
        uint64_t slot_start, slot_end, from;

        if (interval_sec == 0)
                return 0;
        slot_start = unix_time_sec - unix_time_sec % interval_sec;
        slot_end = slot_start + interval_sec;
        /* A start in the future is a clock set back: the slot counts. */
        from = started_sec > slot_start && started_sec <= unix_time_sec ? started_sec : slot_start;
        if (unix_time_sec - from >= jitter_sec)
                return 0;
        return from + jitter_sec < slot_end ? from + jitter_sec - unix_time_sec : slot_end - unix_time_sec;
}

uint64_t rounds_light_offset(const char *node_id, const char *peer_id, const char *kind,
                             uint64_t interval_sec)
{
        uint64_t salt = strcmp(kind, "rtt") == 0 ? 0 : 1 + (strcmp(node_id, peer_id) < 0);

        return rounds_jitter(node_id, peer_id, salt, interval_sec / 2);
}
