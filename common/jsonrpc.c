#include "jsonrpc.h"

#include <errno.h>
#include <string.h>

#include "json_strict.h"
#include "proto.h"

/* Nesting a request or reply needs, with room; deeper input is refused, not recursed into. */
#define JSONRPC_MAX_DEPTH 64

/* One message per line, read strictly (json_strict.h): a message whose keys repeat, whose
 * strings hold NUL or whose integers were clamped would not say what was sent. */
static json_object *parse_json(const char *line, size_t len, int *rpc_code, const char **why)
{
        enum json_strict_error error;
        json_object *obj;
        char detail[128];

        if (json_strict_parse(line, len, JSONRPC_MAX_DEPTH, &obj, &error, detail, sizeof(detail)) == 0)
                return obj;
        *rpc_code = RPC_INVALID_REQUEST;
        switch (error) {
        case JSON_STRICT_DUPLICATE_KEY:
                *why = "an object names the same key twice";
                break;
        case JSON_STRICT_NUL:
                *why = "a string holds a NUL character";
                break;
        case JSON_STRICT_RANGE:
                *why = "an integer does not fit in 64 bits";
                break;
        case JSON_STRICT_UTF8:
                *rpc_code = RPC_PARSE_ERROR;
                *why = "not valid UTF-8";
                break;
        default:
                *rpc_code = RPC_PARSE_ERROR;
                *why = "not valid JSON";
                break;
        }
        return NULL;
}

static bool is_valid_id(json_object *id)
{
        switch (json_object_get_type(id)) {
        case json_type_null:
        case json_type_string:
        case json_type_int:
                return true;
        default:
                return false;
        }
}

int jsonrpc_request_from_object(json_object *obj, struct jsonrpc_request *req, int *rpc_code,
                                const char **why)
{
        json_object *v;

        *req = (struct jsonrpc_request){ 0 };
        if (json_object_is_type(obj, json_type_array)) {
                *rpc_code = RPC_INVALID_REQUEST;
                *why = "batch requests are not supported: send one request per line";
                return -EINVAL;
        }
        if (!json_object_is_type(obj, json_type_object)) {
                *rpc_code = RPC_INVALID_REQUEST;
                *why = "a request must be a JSON object";
                return -EINVAL;
        }
        req->root = json_object_get(obj);

        if (json_object_object_get_ex(obj, "id", &v)) {
                if (!is_valid_id(v)) {
                        *rpc_code = RPC_INVALID_REQUEST;
                        *why = "\"id\" must be a string, an integer or null";
                        return -EINVAL;
                }
                req->id = v;
                req->has_id = true;
        }
        if (!json_object_object_get_ex(obj, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
            strcmp(json_object_get_string(v), "2.0") != 0) {
                *rpc_code = RPC_INVALID_REQUEST;
                *why = "\"jsonrpc\" must be \"2.0\"";
                return -EINVAL;
        }
        if (!json_object_object_get_ex(obj, "method", &v) || !json_object_is_type(v, json_type_string)) {
                *rpc_code = RPC_INVALID_REQUEST;
                *why = "\"method\" must be a string";
                return -EINVAL;
        }
        req->method = json_object_get_string(v);
        if (json_object_object_get_ex(obj, "params", &v) && !json_object_is_type(v, json_type_null)) {
                if (!json_object_is_type(v, json_type_object) && !json_object_is_type(v, json_type_array)) {
                        *rpc_code = RPC_INVALID_REQUEST;
                        *why = "\"params\" must be an object or an array";
                        return -EINVAL;
                }
                req->params = v;
        }
        return 0;
}

int jsonrpc_request_parse(const char *line, size_t len, struct jsonrpc_request *req, int *rpc_code,
                          const char **why)
{
        json_object *obj;
        int r;

        *req = (struct jsonrpc_request){ 0 };
        obj = parse_json(line, len, rpc_code, why);
        if (!obj)
                return -EBADMSG;
        r = jsonrpc_request_from_object(obj, req, rpc_code, why);
        json_object_put(obj);
        return r;
}

void jsonrpc_request_done(struct jsonrpc_request *req)
{
        json_object_put(req->root);
        *req = (struct jsonrpc_request){ 0 };
}

int jsonrpc_response_parse(const char *line, size_t len, struct jsonrpc_response *resp)
{
        json_object *obj, *v, *err;
        const char *why;
        int rpc_code;

        *resp = (struct jsonrpc_response){ 0 };
        obj = parse_json(line, len, &rpc_code, &why);
        if (!obj)
                return -EBADMSG;
        resp->root = obj;
        if (!json_object_is_type(obj, json_type_object))
                goto invalid;
        if (!json_object_object_get_ex(obj, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
            strcmp(json_object_get_string(v), "2.0") != 0)
                goto invalid;

        if (json_object_object_get_ex(obj, "method", &v)) {
                if (!json_object_is_type(v, json_type_string))
                        goto invalid;
                resp->method = json_object_get_string(v);
                json_object_object_get_ex(obj, "params", &resp->params);
                return 0;
        }
        json_object_object_get_ex(obj, "id", &resp->id);
        if (json_object_object_get_ex(obj, "result", &v)) {
                resp->result = v;
                return 0;
        }
        if (!json_object_object_get_ex(obj, "error", &err) || !json_object_is_type(err, json_type_object))
                goto invalid;
        if (!json_object_object_get_ex(err, "code", &v) || !json_object_is_type(v, json_type_int))
                goto invalid;
        resp->error_code = json_object_get_int(v);
        if (json_object_object_get_ex(err, "message", &v) && json_object_is_type(v, json_type_string))
                resp->error_message = json_object_get_string(v);
        else
                resp->error_message = "(no message)";
        json_object_object_get_ex(err, "data", &resp->error_data);
        return 0;

invalid:
        jsonrpc_response_done(resp);
        return -EPROTO;
}

void jsonrpc_response_done(struct jsonrpc_response *resp)
{
        json_object_put(resp->root);
        *resp = (struct jsonrpc_response){ 0 };
}

static json_object *envelope(void)
{
        json_object *msg = json_object_new_object();

        json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
        return msg;
}

json_object *jsonrpc_request_new(const char *method, json_object *params, int64_t id)
{
        json_object *msg = envelope();

        json_object_object_add(msg, "method", json_object_new_string(method));
        if (params)
                json_object_object_add(msg, "params", params);
        json_object_object_add(msg, "id", json_object_new_int64(id));
        return msg;
}

json_object *jsonrpc_result_new(json_object *id, json_object *result)
{
        json_object *msg = envelope();

        json_object_object_add(msg, "result", result ? result : json_object_new_object());
        json_object_object_add(msg, "id", json_object_get(id));
        return msg;
}

json_object *jsonrpc_error_new(json_object *id, int code, const char *message, json_object *data)
{
        json_object *msg = envelope(), *err = json_object_new_object();

        json_object_object_add(err, "code", json_object_new_int(code));
        json_object_object_add(err, "message", json_object_new_string(message));
        if (data)
                json_object_object_add(err, "data", data);
        json_object_object_add(msg, "error", err);
        json_object_object_add(msg, "id", json_object_get(id));
        return msg;
}

json_object *jsonrpc_notification_new(const char *method, json_object *params)
{
        json_object *msg = envelope();

        json_object_object_add(msg, "method", json_object_new_string(method));
        if (params)
                json_object_object_add(msg, "params", params);
        return msg;
}

const char *jsonrpc_to_string(json_object *msg, size_t *len)
{
        size_t n;
        const char *s = json_object_to_json_string_length(
                msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);

        if (len)
                *len = n;
        return s;
}

int jsonrpc_param_string(json_object *params, const char *key, const char **out)
{
        json_object *v;

        if (!params || !json_object_object_get_ex(params, key, &v))
                return 0;
        if (!json_object_is_type(v, json_type_string))
                return -EINVAL;
        *out = json_object_get_string(v);
        return 1;
}

int jsonrpc_param_int(json_object *params, const char *key, int64_t *out)
{
        json_object *v;

        if (!params || !json_object_object_get_ex(params, key, &v))
                return 0;
        if (!json_object_is_type(v, json_type_int))
                return -EINVAL;
        *out = json_object_get_int64(v);
        return 1;
}

int jsonrpc_param_bool(json_object *params, const char *key, bool *out)
{
        json_object *v;

        if (!params || !json_object_object_get_ex(params, key, &v))
                return 0;
        if (!json_object_is_type(v, json_type_boolean))
                return -EINVAL;
        *out = json_object_get_boolean(v);
        return 1;
}

int jsonrpc_params_only(json_object *params, const char *const *allowed, const char **unknown)
{
        if (!params)
                return 0;
        json_object_object_foreach(params, key, val) {
                bool found = false;

                (void)val;
                for (const char *const *a = allowed; a && *a; a++)
                        if (strcmp(*a, key) == 0)
                                found = true;
                if (!found) {
                        *unknown = key;
                        return -E2BIG;
                }
        }
        return 0;
}
