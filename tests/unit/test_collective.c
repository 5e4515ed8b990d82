/* The collective nccl probe's pure parts: its peer-channel messages checked at the door, and the
 * coordinator's stages, deadlines and report fed with sparkd-probe-nccl's own lines (the phases it
 * prints and its result objects, as nccl_run.c writes them). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/probe/collective_coord.h"
#include "daemon/probe/collective_wire.h"
#include "test.h"

#define CID "0123456789abcdef0123456789abcdef"
#define A   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define B   "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* cid CID, from A to B. */
static const char *start_msg =
        "{\"type\":\"collective-start\",\"cid\":\"0123456789abcdef0123456789abcdef\","
        "\"from\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\"to\":\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\","
        "\"hops\":0,\"mid\":7,\"rank\":1,\"nranks\":4,\"head\":\"192.168.1.11\","
        "\"params\":{\"iters\":20},\"deadline_s\":300}";

/* Reads text with one member replaced by value (NULL: removed); the error, or "" when taken. */
static const char *read_with(const char *text, const char *key, const char *value)
{
        static char err[256];
        json_object *msg = json_tokener_parse(text);
        struct collective_wire w;

        if (key && value)
                json_object_object_add(msg, key, json_tokener_parse(value));
        else if (key)
                json_object_object_del(msg, key);
        err[0] = '\0';
        if (collective_wire_read(msg, &w, err, sizeof(err)) == 0)
                err[0] = '\0';
        json_object_put(msg);
        return err;
}

static void test_wire_start(void)
{
        json_object *msg = json_tokener_parse(start_msg);
        struct collective_wire w;
        char err[256];

        CHECK(collective_wire_read(msg, &w, err, sizeof(err)) == 0);
        CHECK(w.type == COLLECTIVE_START && w.rank == 1 && w.nranks == 4 && w.deadline_s == 300 &&
              w.mid == 7);
        CHECK_STREQ(w.head, "192.168.1.11");
        json_object_put(msg);
        CHECK_STREQ(read_with(start_msg, NULL, NULL), "");
        CHECK_STREQ(read_with(start_msg, "cid", "\"0123\""),
                    "cid, from and to are not 32 lower-case hex digits each");
        CHECK_STREQ(read_with(start_msg, "to",
                              "\""
                              "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
                              "\""),
                    "cid, from and to are not 32 lower-case hex digits each");
        CHECK_STREQ(read_with(start_msg, "from", NULL),
                    "cid, from and to are not 32 lower-case hex digits each");
        CHECK_STREQ(read_with(start_msg, "hops", "33"), "hops is not an integer from 0 to 32");
        CHECK_STREQ(read_with(start_msg, "hops", "\"1\""), "hops is not an integer from 0 to 32");
        CHECK_STREQ(read_with(start_msg, "mid", "0"), "mid is not an integer from 1 to 2147483647");
        CHECK_STREQ(read_with(start_msg, "rank", "64"), "rank is not an integer from 0 to 63");
        CHECK_STREQ(read_with(start_msg, "rank", "4"), "rank 4 is not below nranks 4");
        CHECK_STREQ(read_with(start_msg, "nranks", "65"), "nranks is not an integer from 2 to 64");
        CHECK_STREQ(read_with(start_msg, "nranks", "1"), "nranks is not an integer from 2 to 64");
        CHECK_STREQ(read_with(start_msg, "deadline_s", "0"), "deadline_s is not an integer from 1 to 86400");
        CHECK_STREQ(read_with(start_msg, "head", "\"10.0.0.256\""), "head is not an IPv4 address");
        CHECK_STREQ(read_with(start_msg, "head", "\"$(reboot)\""), "head is not an IPv4 address");
        CHECK_STREQ(read_with(start_msg, "params", "[1]"), "params is not an object");
        CHECK_STREQ(read_with(start_msg, "type", "\"collective-reboot\""),
                    "type is not one of the collective's");
}

static void test_wire_others(void)
{
        char id[COLLECTIVE_ID_HEX + 1], text[1024], big[COLLECTIVE_RESULT_MAX + 64];
        const char *env = "\"cid\":\"" CID "\",\"from\":\"" A "\",\"to\":\"" B "\",\"hops\":3,\"mid\":9";

        memset(id, 'a', COLLECTIVE_ID_HEX);
        id[COLLECTIVE_ID_HEX] = '\0';
        snprintf(text, sizeof(text), "{\"type\":\"collective-id\",%s,\"nccl_id\":\"%s\"}", env, id);
        CHECK_STREQ(read_with(text, NULL, NULL), "");
        CHECK_STREQ(read_with(text, "nccl_id", "\"abcd\""), "nccl_id is not 256 lower-case hex digits");
        id[5] = 'G';
        snprintf(text, sizeof(text), "{\"type\":\"collective-id\",%s,\"nccl_id\":\"%s\"}", env, id);
        CHECK_STREQ(read_with(text, NULL, NULL), "nccl_id is not 256 lower-case hex digits");
        snprintf(text, sizeof(text), "{\"type\":\"collective-phase\",%s,\"rank\":2,\"phase\":\"comm_init\"}",
                 env);
        CHECK_STREQ(read_with(text, NULL, NULL), "");
        CHECK_STREQ(read_with(text, "phase", "\"COMM\""), "phase is not 1 to 32 of a-z 0-9 _ - and spaces");
        CHECK_STREQ(read_with(text, "phase", "\"a\\u001b[2J\""),
                    "phase is not 1 to 32 of a-z 0-9 _ - and spaces");
        CHECK_STREQ(read_with(text, "phase", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\""),
                    "phase is not 1 to 32 of a-z 0-9 _ - and spaces");
        snprintf(text, sizeof(text),
                 "{\"type\":\"collective-abort\",%s,\"reason\":\"the collective ended\"}", env);
        CHECK_STREQ(read_with(text, NULL, NULL), "");
        CHECK_STREQ(read_with(text, "reason", "\"a\\u001b[2Jb\""),
                    "reason is not clean text of less than 512 bytes");
        snprintf(text, sizeof(text), "{\"type\":\"collective-alive\",%s}", env);
        CHECK_STREQ(read_with(text, NULL, NULL), "");
        snprintf(text, sizeof(text),
                 "{\"type\":\"collective-result\",%s,\"rank\":0,\"result\":{\"ok\":true}}", env);
        CHECK_STREQ(read_with(text, NULL, NULL), "");
        CHECK_STREQ(read_with(text, "result", "\"ok\""), "result is not an object of at most 32768 bytes");
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        memcpy(big, "{\"e\":\"", 6);
        memcpy(big + sizeof(big) - 3, "\"}", 2);
        CHECK_STREQ(read_with(text, "result", big), "result is not an object of at most 32768 bytes");
        /* What the coordinator walks as arrays must be arrays: json-c aborts on anything else. */
        CHECK_STREQ(
                read_with(text, "result", "{\"ops\":[{\"op\":\"all_reduce\",\"sizes\":[{\"bytes\":1}]}]}"),
                "");
        for (size_t i = 0; i < 4; i++) {
                const char *bad[] = { "{\"ops\":{}}", "{\"ops\":[5]}", "{\"ops\":[{\"sizes\":null}]}",
                                      "{\"ops\":[{\"sizes\":[\"x\"]}]}" };

                CHECK_STREQ(read_with(text, "result", bad[i]),
                            "result's ops is not a list of objects whose sizes are lists of objects");
        }
}

static json_object *four_members(void)
{
        json_object *list = json_object_new_array();
        const char *names[] = { "a", "b", "c", "d" };

        for (int i = 0; i < 4; i++) {
                json_object *m = json_object_new_object();
                char id[33], addr[32];

                memset(id, 'a' + i, 32);
                id[32] = '\0';
                snprintf(addr, sizeof(addr), "192.168.1.%d", 11 + i);
                json_object_object_add(m, "name", json_object_new_string(names[i]));
                json_object_object_add(m, "node_id", json_object_new_string(id));
                json_object_object_add(m, "address", json_object_new_string(addr));
                json_object_array_add(list, m);
        }
        return list;
}

static const double allowance[COLLECTIVE_STAGES] = { 15, 90, 45, 100, 15 };

static const char *get(json_object *o, const char *path)
{
        json_object *v = o;
        char buf[128], *save = NULL;

        snprintf(buf, sizeof(buf), "%s", path);
        for (char *k = strtok_r(buf, ".", &save); k && v; k = strtok_r(NULL, ".", &save)) {
                if (k[0] >= '0' && k[0] <= '9')
                        v = json_object_array_get_idx(v, (size_t)atoi(k));
                else if (!json_object_object_get_ex(v, k, &v))
                        v = NULL;
        }
        return v ? json_object_get_string(v) : NULL;
}

/* What sparkd-probe-nccl prints without a CUDA device: cuda_init, then this result. */
static void test_every_rank_unavailable(void)
{
        json_object *members = four_members(), *report;
        struct collective_coord c;

        CHECK(collective_coord_init(&c, CID, members, allowance, 100) == 0);
        for (int i = 0; i < 4; i++) {
                json_object *r = json_tokener_parse(
                        "{\"kind\":\"nccl\",\"ok\":false,\"role\":\"client\",\"error\":\"no CUDA device: "
                        "CUDA "
                        "driver version is insufficient for CUDA runtime version\",\"phase\":\"cuda_init\","
                        "\"unavailable\":true}");

                collective_coord_phase(&c, i, "cuda_init", 100.1);
                CHECK(!collective_coord_is_over(&c, 100.2));
                collective_coord_result(&c, i, r, 100.2 + i * 0.01);
                json_object_put(r);
        }
        CHECK(collective_coord_is_over(&c, 100.3));
        report = collective_coord_report(&c);
        CHECK_STREQ(get(report, "status"), "unavailable");
        CHECK_STREQ(get(report, "nodes.3.status"), "unavailable");
        CHECK_STREQ(get(report, "nodes.3.last_phase"), "cuda_init");
        CHECK_STREQ(get(report, "error"),
                    "rank 0 (a) in phase cuda_init: no CUDA device: CUDA driver version is "
                    "insufficient for CUDA runtime version");
        json_object_put(report);
        collective_coord_free(&c);
        json_object_put(members);
}

static json_object *ok_result(int rank, bool correct)
{
        char text[1024];

        snprintf(text, sizeof(text),
                 "{\"kind\":\"nccl\",\"ok\":true,\"rank\":%d,\"nranks\":4,\"phases_ms\":{\"cuda_init\":800."
                 "0},"
                 "\"transport\":{\"network\":\"Socket\"},\"busbw_gbytes\":%.1f,\"algbw_gbytes\":%.1f,"
                 "\"ops\":[{\"op\":\"all_reduce\",\"sizes\":[{\"bytes\":67108864,\"time_us\":9000.0,"
                 "\"algbw\":7.4,\"busbw\":11.1,\"correct\":true},{\"bytes\":268435456,\"time_us\":33000.0,"
                 "\"algbw\":8.1,\"busbw\":12.2,\"correct\":%s}]}]}",
                 rank, 12.2 + rank, 8.1 + rank, correct ? "true" : "false");
        return json_tokener_parse(text);
}

/* The helper's phases in order, rank 0 making the id and the others waiting for it. */
static void test_a_good_run(void)
{
        static const char *const phases0[] = { "cuda_init", "buffers", "listening",
                                               "comm_init", "running", "finalize" };
        static const char *const phases[] = { "cuda_init", "buffers", "unique_id",
                                              "comm_init", "running", "finalize" };
        json_object *members = four_members(), *report;
        struct collective_coord c;

        CHECK(collective_coord_init(&c, CID, members, allowance, 0) == 0);
        for (int p = 0; p < 6; p++)
                for (int i = 0; i < 4; i++) {
                        collective_coord_phase(&c, i, i ? phases[p] : phases0[p], p + 1);
                        if (p == 2 && i == 0)
                                CHECK(c.m[0].stage == COLLECTIVE_STAGE_INIT &&
                                      c.stage == COLLECTIVE_STAGE_ID);
                }
        CHECK(c.stage == COLLECTIVE_STAGE_REPORT);
        for (int i = 0; i < 4; i++) {
                json_object *r = ok_result(i, i != 3);

                collective_coord_result(&c, i, r, 10);
                json_object_put(r);
        }
        CHECK(collective_coord_is_over(&c, 10));
        report = collective_coord_report(&c);
        CHECK_STREQ(get(report, "status"), "ok");
        CHECK_STREQ(get(report, "busbw_gbytes"), "12.2");
        CHECK_STREQ(get(report, "ops.0.sizes.0.correct"), "true");
        /* Rank 3 checked the largest size wrong: the whole collective's size is wrong. */
        CHECK_STREQ(get(report, "ops.0.sizes.1.correct"), "false");
        CHECK_STREQ(get(report, "nodes.2.transport.network"), "Socket");
        CHECK_STREQ(get(report, "nodes.1.phases_ms.cuda_init"), "800.0");
        json_object_put(report);
        collective_coord_free(&c);
        json_object_put(members);
}

/* Three ranks reach init; d never leaves the unique id stage: named at that stage's deadline. */
static void test_a_stage_deadline(void)
{
        json_object *members = four_members(), *report;
        struct collective_coord c;

        CHECK(collective_coord_init(&c, CID, members, allowance, 0) == 0);
        for (int i = 0; i < 4; i++)
                collective_coord_phase(&c, i, "cuda_init", 1);
        collective_coord_phase(&c, 0, "listening", 2);
        collective_coord_phase(&c, 1, "comm_init", 3);
        collective_coord_phase(&c, 2, "comm_init", 3);
        collective_coord_phase(&c, 3, "unique_id", 3);
        CHECK(c.stage == COLLECTIVE_STAGE_ID);
        CHECK(collective_coord_next_check(&c) == 1 + 90);
        CHECK(!collective_coord_is_over(&c, 90));
        CHECK(collective_coord_is_over(&c, 91));
        report = collective_coord_report(&c);
        CHECK_STREQ(get(report, "status"), "timeout");
        CHECK_STREQ(get(report, "error"),
                    "rank 3 (d) did not leave the unique id stage within 90 s (last phase unique_id)");
        CHECK_STREQ(get(report, "nodes.3.status"), "timeout");
        CHECK_STREQ(get(report, "nodes.0.stage"), "init");
        json_object_put(report);
        collective_coord_free(&c);
        json_object_put(members);
}

/* A rank whose helper was killed ends it after the grace, named, the others told to stop. */
static void test_a_rank_killed(void)
{
        json_object *members = four_members(), *report;
        json_object *killed =
                json_tokener_parse("{\"ok\":false,\"error\":\"the helper was killed by signal 9 "
                                   "(Killed)\",\"phase\":\"comm_init\"}");
        struct collective_coord c;

        CHECK(collective_coord_init(&c, CID, members, allowance, 0) == 0);
        for (int i = 0; i < 4; i++)
                collective_coord_phase(&c, i, "comm_init", 1);
        collective_coord_result(&c, 2, killed, 10);
        CHECK(!collective_coord_is_over(&c, 12));
        CHECK(collective_coord_next_check(&c) == 10 + COLLECTIVE_GRACE_SEC);
        CHECK(collective_coord_is_over(&c, 10 + COLLECTIVE_GRACE_SEC));
        report = collective_coord_report(&c);
        CHECK_STREQ(get(report, "status"), "failed");
        CHECK_STREQ(get(report, "error"),
                    "rank 2 (c) in phase comm_init: the helper was killed by signal 9 (Killed)");
        CHECK_STREQ(get(report, "nodes.0.status"), "aborted");
        json_object_put(report);
        json_object_put(killed);
        collective_coord_free(&c);
        json_object_put(members);
}

static void test_bounds(void)
{
        json_object *one =
                json_tokener_parse("[{\"name\":\"a\",\"node_id\":\"" A "\",\"address\":\"10.0.0.1\"}]");
        json_object *many = json_object_new_array();
        struct collective_coord c;

        CHECK(collective_coord_init(&c, CID, one, allowance, 0) == -EINVAL);
        for (int i = 0; i < COLLECTIVE_NODES_MAX + 1; i++)
                json_object_array_add(many, json_object_get(json_object_array_get_idx(one, 0)));
        CHECK(collective_coord_init(&c, CID, many, allowance, 0) == -EINVAL);
        json_object_array_del_idx(many, 0, 1);
        CHECK(collective_coord_init(&c, CID, many, allowance, 0) == 0);
        CHECK(c.n == COLLECTIVE_NODES_MAX);
        collective_coord_free(&c);
        json_object_put(one);
        json_object_put(many);
}

int main(void)
{
        RUN(test_wire_start);
        RUN(test_wire_others);
        RUN(test_every_rank_unavailable);
        RUN(test_a_good_run);
        RUN(test_a_stage_deadline);
        RUN(test_a_rank_killed);
        RUN(test_bounds);
        return test_result();
}
