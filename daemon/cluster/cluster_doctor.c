#include "cluster_doctor.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json_get.h"
#include "common/proto.h"
#include "daemon/base/log.h"

#define REQUEST_TYPE "cluster-doctor-request"
#define REPLY_TYPE   "cluster-doctor-reply"
#define CACHE_USEC   1000000LL

struct doctor_ask {
        struct cluster_doctor *owner;
        int id; /* 0: free */
        char peer_id[33];
        struct event *timeout;
        cluster_doctor_done_fn done;
        void *userdata;
};

struct cluster_doctor {
        struct peers *peers;
        const struct fabric_api_context *doctor;
        struct doctor_ask asks[CLUSTER_DOCTOR_MAX_ASKS];
        int next_id;
        json_object *cached; /* this node's doctor as last run for a peer */
        int64_t cached_usec;
};

static int64_t now_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void ask_end(struct doctor_ask *a, json_object *doctor, const char *why)
{
        cluster_doctor_done_fn done = a->done;
        void *userdata = a->userdata;

        evtimer_del(a->timeout);
        a->id = 0;
        a->done = NULL;
        if (done)
                done(doctor, why, userdata);
}

static void on_timeout(evutil_socket_t fd, short what, void *userdata)
{
        ask_end(userdata, NULL, "no answer within the timeout");
}

static json_object *own_doctor(struct cluster_doctor *cd)
{
        int64_t now = now_usec();
        json_object *doctor = NULL;

        if (cd->cached && now - cd->cached_usec < CACHE_USEC)
                return cd->cached;
        if (fabric_api_doctor(cd->doctor, &doctor) < 0)
                return NULL;
        json_object_put(cd->cached);
        cd->cached = doctor;
        cd->cached_usec = now;
        return doctor;
}

static void answer(struct cluster_doctor *cd, const char *peer_id, json_object *request)
{
        json_object *reply = json_object_new_object(), *ask = NULL, *doctor = own_doctor(cd);

        json_object_object_get_ex(request, "ask", &ask);
        json_object_object_add(reply, "type", json_object_new_string(REPLY_TYPE));
        json_object_object_add(reply, "ask", json_object_new_int(ask ? json_object_get_int(ask) : 0));
        /* The doctor's JSON is small, but it must fit one line of the peer channel. */
        if (doctor && json_plain_text_length(doctor) < SPARKD_MAX_LINE - 256)
                json_object_object_add(reply, "doctor", json_object_get(doctor));
        else
                json_object_object_add(
                        reply, "error",
                        json_object_new_string(doctor ? "the doctor's result is over 64 KiB"
                                                      : "the doctor could not read this node's facts"));
        (void)peers_send(cd->peers, peer_id, reply);
}

static void take_reply(struct cluster_doctor *cd, const char *peer_id, json_object *reply)
{
        json_object *ask = NULL, *doctor = NULL, *error = NULL;

        if (!json_object_object_get_ex(reply, "ask", &ask) || !json_object_is_type(ask, json_type_int))
                return;
        for (size_t i = 0; i < CLUSTER_DOCTOR_MAX_ASKS; i++) {
                struct doctor_ask *a = &cd->asks[i];

                if (!a->id || a->id != json_object_get_int(ask) || strcmp(a->peer_id, peer_id) != 0)
                        continue;
                if (json_object_object_get_ex(reply, "doctor", &doctor) &&
                    json_object_is_type(doctor, json_type_object))
                        ask_end(a, doctor, NULL);
                else if (json_object_object_get_ex(reply, "error", &error) &&
                         json_object_is_type(error, json_type_string))
                        ask_end(a, NULL, json_object_get_string(error));
                else
                        ask_end(a, NULL, "the peer's answer holds no doctor");
                return;
        }
}

static void on_peer_message(const char *node_id, const char *type, json_object *msg, void *userdata)
{
        struct cluster_doctor *cd = userdata;

        if (strcmp(type, REQUEST_TYPE) == 0)
                answer(cd, node_id, msg);
        else if (strcmp(type, REPLY_TYPE) == 0)
                take_reply(cd, node_id, msg);
        else if (strcmp(type, "peer-down") == 0)
                for (size_t i = 0; i < CLUSTER_DOCTOR_MAX_ASKS; i++)
                        if (cd->asks[i].id && strcmp(cd->asks[i].peer_id, node_id) == 0)
                                ask_end(&cd->asks[i], NULL, "the peer went down");
}

int cluster_doctor_ask(struct cluster_doctor *cd, const char *peer_id, uint64_t timeout_usec,
                       cluster_doctor_done_fn done, void *userdata)
{
        struct timeval tv = { .tv_sec = (time_t)(timeout_usec / 1000000),
                              .tv_usec = (suseconds_t)(timeout_usec % 1000000) };
        struct doctor_ask *a = NULL;
        json_object *msg;
        int r;

        for (size_t i = 0; i < CLUSTER_DOCTOR_MAX_ASKS && !a; i++)
                if (!cd->asks[i].id)
                        a = &cd->asks[i];
        if (!a)
                return -EBUSY;
        cd->next_id = cd->next_id % 1000000 + 1;
        msg = json_object_new_object();
        json_object_object_add(msg, "type", json_object_new_string(REQUEST_TYPE));
        json_object_object_add(msg, "ask", json_object_new_int(cd->next_id));
        r = peers_send(cd->peers, peer_id, msg);
        if (r < 0)
                return r;
        a->id = cd->next_id;
        snprintf(a->peer_id, sizeof(a->peer_id), "%s", peer_id);
        a->done = done;
        a->userdata = userdata;
        evtimer_add(a->timeout, &tv);
        return a->id;
}

void cluster_doctor_cancel(struct cluster_doctor *cd, int ask_id)
{
        for (size_t i = 0; i < CLUSTER_DOCTOR_MAX_ASKS; i++)
                if (cd->asks[i].id == ask_id) {
                        evtimer_del(cd->asks[i].timeout);
                        cd->asks[i].id = 0;
                        cd->asks[i].done = NULL;
                }
}

int cluster_doctor_new(struct event_base *base, struct peers *peers, const struct fabric_api_context *doctor,
                       struct cluster_doctor **ret)
{
        struct cluster_doctor *cd = calloc(1, sizeof(*cd));
        int r;

        if (!cd)
                return -ENOMEM;
        cd->peers = peers;
        cd->doctor = doctor;
        for (size_t i = 0; i < CLUSTER_DOCTOR_MAX_ASKS; i++) {
                cd->asks[i].owner = cd;
                cd->asks[i].timeout = evtimer_new(base, on_timeout, &cd->asks[i]);
                if (!cd->asks[i].timeout) {
                        cluster_doctor_free(cd);
                        return -ENOMEM;
                }
        }
        r = peers_add_message_handler(peers, "cluster-doctor-", on_peer_message, cd);
        if (r < 0) {
                cluster_doctor_free(cd);
                return r;
        }
        *ret = cd;
        return 0;
}

void cluster_doctor_free(struct cluster_doctor *cd)
{
        if (!cd)
                return;
        peers_remove_message_handler(cd->peers, "cluster-doctor-");
        for (size_t i = 0; i < CLUSTER_DOCTOR_MAX_ASKS; i++)
                if (cd->asks[i].timeout)
                        event_free(cd->asks[i].timeout);
        json_object_put(cd->cached);
        free(cd);
}
