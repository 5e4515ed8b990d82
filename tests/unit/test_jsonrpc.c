#include <errno.h>

#include "common/jsonrpc.h"
#include "common/proto.h"
#include "test.h"

static int parse(const char *line, struct jsonrpc_request *req, int *code)
{
        const char *why = NULL;

        *code = 0;
        return jsonrpc_request_parse(line, strlen(line), req, code, &why);
}

static void test_valid_request(void)
{
        struct jsonrpc_request req;
        int code;

        CHECK(parse("{\"jsonrpc\":\"2.0\",\"method\":\"status\",\"id\":7}", &req, &code) == 0);
        CHECK_STREQ(req.method, "status");
        CHECK(req.has_id && json_object_get_int(req.id) == 7);
        CHECK(req.params == NULL);
        jsonrpc_request_done(&req);

        CHECK(parse("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"a\":1},\"id\":\"abc\"}\r\n", &req,
                    &code) == 0);
        CHECK(json_object_is_type(req.params, json_type_object));
        CHECK_STREQ(json_object_get_string(req.id), "abc");
        jsonrpc_request_done(&req);

        /* A notification: no id, no reply. */
        CHECK(parse("{\"jsonrpc\":\"2.0\",\"method\":\"status\"}", &req, &code) == 0);
        CHECK(!req.has_id);
        jsonrpc_request_done(&req);
}

static void test_invalid_requests(void)
{
        static const struct {
                const char *line;
                int code;
        } cases[] = {
                { "{", RPC_PARSE_ERROR },
                { "not json", RPC_PARSE_ERROR },
                { "{\"jsonrpc\":\"2.0\",\"method\":\"a\"} {\"x\":1}", RPC_PARSE_ERROR },
                { "\"a string\"", RPC_INVALID_REQUEST },
                { "[{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"id\":1}]", RPC_INVALID_REQUEST },
                { "{\"method\":\"a\",\"id\":1}", RPC_INVALID_REQUEST },
                { "{\"jsonrpc\":\"1.0\",\"method\":\"a\",\"id\":1}", RPC_INVALID_REQUEST },
                { "{\"jsonrpc\":\"2.0\",\"method\":5,\"id\":1}", RPC_INVALID_REQUEST },
                { "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":3,\"id\":1}", RPC_INVALID_REQUEST },
                { "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"id\":{}}", RPC_INVALID_REQUEST },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct jsonrpc_request req;
                int code;

                CHECK(parse(cases[i].line, &req, &code) < 0);
                if (code != cases[i].code)
                        fprintf(stderr, "  case %zu: %s -> %d\n", i, cases[i].line, code);
                CHECK(code == cases[i].code);
                jsonrpc_request_done(&req);
        }
}

/* What the API answers a line the strict reading refuses: the code and the sentence, the same
 * whichever json-c the node has (json-c 0.17 alone would call the range "not valid JSON"). */
static void test_strict_refusals(void)
{
        static const struct {
                const char *line;
                int code;
                const char *why;
        } cases[] = {
                { "{\"jsonrpc\":\"2.0\",\"method\":\"status\",\"id\":123456789012345678901234567890}",
                  RPC_INVALID_REQUEST, "an integer does not fit in 64 bits" },
                { "{\"jsonrpc\":\"2.0\",\"method\":\"status\",\"method\":\"reload\",\"id\":1}",
                  RPC_INVALID_REQUEST, "an object names the same key twice" },
                { "{\"jsonrpc\":\"2.0\",\"method\":\"vers\\u0000ion\",\"id\":1}", RPC_INVALID_REQUEST,
                  "a string holds a NUL character" },
                { "{\"jsonrpc\":\"2.0\",\"method\":\"\xc0\x80\",\"id\":1}", RPC_PARSE_ERROR,
                  "not valid UTF-8" },
                { "{\"jsonrpc\":\"2.0\",\"method\":\"a\tb\",\"id\":1}", RPC_PARSE_ERROR, "not valid JSON" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct jsonrpc_request req;
                const char *why = NULL;
                int code = 0;

                CHECK(jsonrpc_request_parse(cases[i].line, strlen(cases[i].line), &req, &code, &why) < 0);
                CHECK(code == cases[i].code);
                CHECK_STREQ(why, cases[i].why);
                jsonrpc_request_done(&req);
        }
}

static void test_id_kept_for_error(void)
{
        struct jsonrpc_request req;
        int code;

        CHECK(parse("{\"jsonrpc\":\"2.0\",\"method\":7,\"id\":99}", &req, &code) < 0);
        CHECK(req.id && json_object_get_int(req.id) == 99);
        jsonrpc_request_done(&req);
}

static void test_responses(void)
{
        struct jsonrpc_response resp;
        const char *ok = "{\"jsonrpc\":\"2.0\",\"result\":{\"a\":1},\"id\":3}";
        const char *err = "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32601,\"message\":\"nope\"},\"id\":3}";
        const char *note = "{\"jsonrpc\":\"2.0\",\"method\":\"event\",\"params\":{\"event\":\"x\"}}";

        CHECK(jsonrpc_response_parse(ok, strlen(ok), &resp) == 0);
        CHECK(resp.result && !resp.error_message && json_object_get_int(resp.id) == 3);
        jsonrpc_response_done(&resp);
        CHECK(jsonrpc_response_parse(err, strlen(err), &resp) == 0);
        CHECK(resp.error_code == RPC_METHOD_NOT_FOUND);
        CHECK_STREQ(resp.error_message, "nope");
        jsonrpc_response_done(&resp);
        CHECK(jsonrpc_response_parse(note, strlen(note), &resp) == 0);
        CHECK_STREQ(resp.method, "event");
        jsonrpc_response_done(&resp);
        CHECK(jsonrpc_response_parse("{\"jsonrpc\":\"2.0\"}", 17, &resp) == -EPROTO);
}

static void test_round_trip_is_one_line(void)
{
        json_object *params = json_object_new_object();
        json_object *msg;
        const char *s;
        size_t len;

        json_object_object_add(params, "text", json_object_new_string("two\nlines/and a slash"));
        msg = jsonrpc_request_new("x", params, 1);
        s = jsonrpc_to_string(msg, &len);
        CHECK(strchr(s, '\n') == NULL);
        CHECK(len == strlen(s));
        json_object_put(msg);
}

static void test_params_only(void)
{
        static const char *const allowed[] = { "peer", "kind", NULL };
        json_object *p = json_tokener_parse("{\"peer\":\"a\",\"bogus\":1}");
        const char *unknown = NULL;
        const char *peer = NULL;
        int64_t n = 0;

        CHECK(jsonrpc_params_only(p, allowed, &unknown) == -E2BIG);
        CHECK_STREQ(unknown, "bogus");
        CHECK(jsonrpc_param_string(p, "peer", &peer) == 1);
        CHECK_STREQ(peer, "a");
        CHECK(jsonrpc_param_string(p, "bogus", &peer) == -EINVAL);
        CHECK(jsonrpc_param_int(p, "bogus", &n) == 1 && n == 1);
        CHECK(jsonrpc_param_int(p, "missing", &n) == 0);
        json_object_put(p);
}

int main(void)
{
        RUN(test_valid_request);
        RUN(test_invalid_requests);
        RUN(test_strict_refusals);
        RUN(test_id_kept_for_error);
        RUN(test_responses);
        RUN(test_round_trip_is_one_line);
        RUN(test_params_only);
        return test_result();
}
