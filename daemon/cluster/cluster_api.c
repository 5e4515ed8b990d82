#include "cluster_api.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/proto.h"
#include "summary.h"

/* The view's answer holds every node's summary: the most the view keeps fit in what sparkc
 * reads, with 2 MiB left for the links and alerts made of them (a larger one is answered with
 * an error that names the limit). */
_Static_assert((long long)CLUSTER_MAX_NODES *SUMMARY_MAX_BYTES + (2 << 20) <= SPARKD_MAX_REPLY,
               "the cluster view's answer must fit in SPARKD_MAX_REPLY");

static void freshen(struct cluster_api_context *ctx)
{
        if (ctx->freshen)
                ctx->freshen(ctx->freshen_userdata);
}

static int method_cluster(struct api_request *req, json_object *params, void *userdata)
{
        struct cluster_api_context *ctx = userdata;
        json_object *o, *nodes;
        bool with_results = false;

        (void)jsonrpc_param_bool(params, "results", &with_results);
        freshen(ctx);
        o = cluster_nodes_to_json(ctx->cluster, with_results);
        nodes = json_object_object_get(o, "nodes");
        json_object_object_add(o, "links", cluster_links_to_json(ctx->cluster));
        json_object_object_add(o, "alerts", cluster_alerts_to_json(ctx->cluster, nodes));
        json_object_object_add(o, "stale_after_s",
                               json_object_new_double((double)cluster_stale_usec(ctx->cluster) / 1e6));
        api_request_reply(req, o);
        return 0;
}

/* A doctor request waiting for a peer's answer. */
struct doctor_wait {
        struct api_request *req;
        struct cluster_doctor *doctor;
        int ask_id;
        json_object *answer; /* the summary's view, sent when the peer does not answer */
};

static json_object *doctor_answer(struct cluster *c, const char *node_id, const char *source)
{
        json_object *o = json_object_new_object(), *node = NULL;
        uint64_t age = 0;
        bool stale = false;
        json_object *summary = cluster_get_section(c, node_id, "doctor", &age, &stale);

        node = cluster_get_section(c, node_id, "node", NULL, NULL);
        json_object_object_add(o, "node_id", json_object_new_string(node_id));
        json_object_object_add(o, "name",
                               node ? json_object_get(json_object_object_get(node, "name")) : NULL);
        json_object_object_add(o, "source", json_object_new_string(source));
        json_object_object_add(o, "age_s", json_object_new_double((double)(age / 1000) / 1000.0));
        json_object_object_add(o, "stale", json_object_new_boolean(stale));
        json_object_object_add(o, "summary", summary);
        json_object_put(node);
        return o;
}

static void doctor_wait_free(struct doctor_wait *w)
{
        json_object_put(w->answer);
        free(w);
}

static void on_peer_doctor(json_object *doctor, const char *why, void *userdata)
{
        struct doctor_wait *w = userdata;
        json_object *answer = TAKE_PTR(w->answer);

        if (doctor) {
                json_object_object_add(answer, "source", json_object_new_string("peer"));
                json_object_object_add(answer, "age_s", json_object_new_double(0));
                json_object_object_add(answer, "stale", json_object_new_boolean(false));
                json_object_object_add(answer, "doctor", json_object_get(doctor));
        } else {
                char note[256];

                snprintf(note, sizeof(note),
                         "the node did not send its full doctor (%s): its summary shows only "
                         "the checks that are not ok",
                         why);
                json_object_object_add(answer, "note", json_object_new_string(note));
        }
        api_request_reply(w->req, answer);
        doctor_wait_free(w);
}

static void on_doctor_orphan(void *userdata)
{
        struct doctor_wait *w = userdata;

        cluster_doctor_cancel(w->doctor, w->ask_id);
        api_request_reply(w->req, NULL);
        doctor_wait_free(w);
}

/* The names of the known nodes, for an error naming none of them. */
struct known {
        char text[384];
};

static void add_known(const char *node_id, const char *name, uint64_t age_usec, bool is_stale,
                      void *userdata)
{
        struct known *k = userdata;
        size_t used = strlen(k->text);

        snprintf(k->text + used, sizeof(k->text) - used, "%s%s", used ? ", " : "", name);
}

static int method_cluster_doctor(struct api_request *req, json_object *params, void *userdata)
{
        struct cluster_api_context *ctx = userdata;
        const char *what = NULL;
        char node_id[33], why[512];
        struct doctor_wait *w;
        json_object *answer;
        int r;

        (void)jsonrpc_param_string(params, "node", &what);
        freshen(ctx);
        r = cluster_find_node(ctx->cluster, what, node_id);
        if (r < 0) {
                struct known known = { .text = "" };

                cluster_foreach_node(ctx->cluster, add_known, &known);
                snprintf(why, sizeof(why), "%s \"%.64s\" in the cluster view; it knows %s",
                         r == -ENOENT ? "no node named" : "more than one node's id begins with", what,
                         known.text);
                api_request_reply_error(req, RPC_INVALID_PARAMS, why, NULL);
                return 0;
        }
        if (strcmp(node_id, cluster_self_id(ctx->cluster)) == 0) {
                json_object *doctor = NULL;

                answer = doctor_answer(ctx->cluster, node_id, "self");
                if (fabric_api_doctor(ctx->fabric, &doctor) == 0)
                        json_object_object_add(answer, "doctor", doctor);
                api_request_reply(req, answer);
                return 0;
        }
        answer = doctor_answer(ctx->cluster, node_id, "summary");
        w = calloc(1, sizeof(*w));
        if (!w) {
                json_object_put(answer);
                return -ENOMEM;
        }
        w->req = req;
        w->doctor = ctx->doctor;
        w->answer = answer;
        r = cluster_is_peer_up(ctx->cluster, node_id)
                    ? cluster_doctor_ask(ctx->doctor, node_id, CLUSTER_DOCTOR_TIMEOUT_USEC, on_peer_doctor,
                                         w)
                    : -ENOTCONN;
        if (r > 0) {
                w->ask_id = r;
                api_request_on_orphan(req, on_doctor_orphan, w);
                return 0;
        }
        w->answer = NULL;
        json_object_object_add(answer, "note",
                               json_object_new_string(r == -ENOTCONN
                                                              ? "the node is not a peer up now: its summary "
                                                                "shows only the checks that are not ok"
                                                              : "too many doctor requests wait for peers: "
                                                                "its summary shows only the checks that "
                                                                "are not ok"));
        api_request_reply(req, answer);
        doctor_wait_free(w);
        return 0;
}

static const struct api_param cluster_params[] = {
        { .name = "results", .type = API_PARAM_BOOLEAN },
        {},
};

static const struct api_param cluster_doctor_params[] = {
        { .name = "node", .type = API_PARAM_STRING, .is_required = true },
        {},
};

static const struct api_method cluster_methods[] = {
        { "cluster", method_cluster, false, cluster_params },
        { "cluster-doctor", method_cluster_doctor, false, cluster_doctor_params },
};

int cluster_api_register(struct api_server *api, struct cluster_api_context *context)
{
        return api_server_add_methods(api, cluster_methods, ARRAY_SIZE(cluster_methods), context);
}
