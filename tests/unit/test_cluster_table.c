/* A held node's "peers" section searched for an id: in its text when it is written as sparkd
 * writes it, through the ids read from it otherwise, and the same answers both ways. */
#include <stdlib.h>

#include "common/json_raw.h"
#include "daemon/cluster/cluster_table.h"
#include "test.h"

#define A      "0123456789abcdef0123456789abcdef"
#define B      "1123456789abcdef0123456789abcdef"
#define C      "f123456789abcdef0123456789abcdef"
#define ABSENT "7123456789abcdef0123456789abcdef"

/* A held node (one with an envelope) whose "peers" section is text. */
static struct cluster_node *held_node(struct cluster_table *t, const char *id, const char *peers)
{
        struct cluster_node *n = cluster_table_add(t, id);

        n->envelope = strdup("{}");
        n->sections = json_object_new_object();
        json_object_object_add(n->sections, "peers", json_raw_new(peers));
        return n;
}

static void check_lists(struct cluster_node *n, bool in_text)
{
        CHECK(cluster_node_lists_peer(n, A));
        CHECK(cluster_node_lists_peer(n, B));
        CHECK(cluster_node_lists_peer(n, C));
        CHECK(!cluster_node_lists_peer(n, ABSENT));
        CHECK(!cluster_node_lists_peer(n, "0123"));
        CHECK(!cluster_node_lists_peer(n, ""));
        CHECK(n->is_up_with_in_text == in_text);
        /* Asked again: the answer read once is the same. */
        CHECK(cluster_node_lists_peer(n, C));
        CHECK(!cluster_node_lists_peer(n, ABSENT));
}

static void test_written_by_sparkd_is_searched_in_its_text(void)
{
        struct cluster_table t = { 0 };
        struct cluster_node *n = held_node(&t, A, "[\"" A "\",\"" B "\",\"" C "\"]");

        check_lists(n, true);
        CHECK(n->up_with == NULL);
        cluster_table_clear(&t);
}

static void test_written_otherwise_is_read_into_ids(void)
{
        const char *others[] = {
                "[ \"" A "\", \"" B "\", \"" C "\" ]", /* spaces */
                "[\"" C "\",\"" A "\",\"" B "\"]",     /* not sorted */
                "[\"" A "\",\"" B "\",\"" C "\",7]",   /* not only ids */
        };

        for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++) {
                struct cluster_table t = { 0 };

                check_lists(held_node(&t, A, others[i]), false);
                cluster_table_clear(&t);
        }
}

static void test_an_empty_or_upper_case_list(void)
{
        struct cluster_table t = { 0 };
        struct cluster_node *empty = held_node(&t, A, "[]");
        struct cluster_node *upper = held_node(&t, B, "[\"0123456789ABCDEF0123456789ABCDEF\"]");

        CHECK(!cluster_node_lists_peer(empty, A));
        CHECK(empty->is_up_with_in_text);
        /* Not an id as sparkd writes one: not searched in the text, and not read as one. */
        CHECK(!cluster_node_lists_peer(upper, A));
        CHECK(!upper->is_up_with_in_text);
        cluster_table_clear(&t);
}

int main(void)
{
        RUN(test_written_by_sparkd_is_searched_in_its_text);
        RUN(test_written_otherwise_is_read_into_ids);
        RUN(test_an_empty_or_upper_case_list);
        return test_result();
}
