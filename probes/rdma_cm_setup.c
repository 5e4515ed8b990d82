/*
 * sparkd-probe-rdma's connections through RDMA CM: the server listens on each rail's address,
 * the client connects every queue pair with the one-time token in the connect's private data,
 * and the server refuses a connect without it. The server's answer to the first connection says
 * where its other rails listen, so the client needs only the first address. Waiting for a
 * control message is here too: on the server, the wait also watches the connections' events.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "probe_common.h"
#include "rdma_session.h"

#define RESOLVE_MS 2000

static int rail_sockaddr(const struct rdma_rail *rail, uint16_t port, struct sockaddr_storage *ss)
{
        char host[64], *pct;

        memset(ss, 0, sizeof(*ss));
        snprintf(host, sizeof(host), "%s", rail->address);
        if (!rail->is_ipv6) {
                struct sockaddr_in *in = (struct sockaddr_in *)ss;

                in->sin_family = AF_INET;
                in->sin_port = htons(port);
                return inet_pton(AF_INET, host, &in->sin_addr) == 1 ? 0 : -EINVAL;
        }
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        if ((pct = strchr(host, '%'))) {
                *pct = '\0';
                in6->sin6_scope_id = if_nametoindex(pct + 1);
        }
        return inet_pton(AF_INET6, host, &in6->sin6_addr) == 1 ? 0 : -EINVAL;
}

static int open_channel(struct rdma_session *s, char *err, size_t err_size)
{
        int flags;

        if (s->channel)
                return 0;
        s->channel = rdma_create_event_channel();
        if (!s->channel)
                return rdma_verbs_error(err, err_size, "rdma_create_event_channel", "rdma_cm", errno);
        flags = fcntl(s->channel->fd, F_GETFL);
        if (flags < 0 || fcntl(s->channel->fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return rdma_verbs_error(err, err_size, "fcntl(O_NONBLOCK)", "the rdma_cm channel", errno);
        return 0;
}

/* The next CM event within timeout_ms (0: only one already waiting); -EAGAIN when none. */
static int next_event(struct rdma_session *s, int timeout_ms, struct rdma_cm_event **ev, char *err,
                      size_t err_size)
{
        struct pollfd p = { .fd = s->channel->fd, .events = POLLIN };

        if (rdma_get_cm_event(s->channel, ev) == 0)
                return 0;
        if (errno != EAGAIN)
                return rdma_verbs_error(err, err_size, "rdma_get_cm_event", "rdma_cm", errno);
        if (timeout_ms <= 0 || poll(&p, 1, timeout_ms) <= 0)
                return -EAGAIN;
        if (rdma_get_cm_event(s->channel, ev) == 0)
                return 0;
        return errno == EAGAIN ? -EAGAIN
                               : rdma_verbs_error(err, err_size, "rdma_get_cm_event", "rdma_cm", errno);
}

static const char *device_of(struct rdma_cm_id *id)
{
        return id->verbs ? ibv_get_device_name(id->verbs->device) : "?";
}

int rdma_server_listen(struct rdma_session *s, char *err, size_t err_size)
{
        int r = open_channel(s, err, err_size);

        for (size_t i = 0; r == 0 && i < s->n_rails; i++) {
                struct rdma_rail_res *rr = &s->rails[i];
                struct sockaddr_storage ss;

                if (rail_sockaddr(&rr->rail, i == 0 ? s->o->args.port : 0, &ss) < 0) {
                        snprintf(err, err_size, "%s: not an address: %s", rr->rail.device, rr->rail.address);
                        return -EINVAL;
                }
                if (rdma_create_id(s->channel, &rr->listen_id, NULL, RDMA_PS_TCP) < 0)
                        return rdma_verbs_error(err, err_size, "rdma_create_id", rr->rail.device, errno);
                if (rdma_bind_addr(rr->listen_id, (struct sockaddr *)&ss) < 0)
                        return rdma_verbs_error(err, err_size, "rdma_bind_addr", rr->rail.address, errno);
                if (rr->listen_id->verbs && strcmp(device_of(rr->listen_id), rr->rail.device) != 0) {
                        snprintf(err, err_size, "RDMA CM bound %s to %s, not to %s", rr->rail.address,
                                 device_of(rr->listen_id), rr->rail.device);
                        return -ENODEV;
                }
                if (rdma_listen(rr->listen_id, 16) < 0)
                        return rdma_verbs_error(err, err_size, "rdma_listen", rr->rail.device, errno);
                rr->listen_port = ntohs(rdma_get_src_port(rr->listen_id));
        }
        return r;
}

/* A refusal's reason with its NUL: RDMA CM's reject carries at most 148 bytes of private data. */
#define RDMA_REJECT_REASON_MAX 148

/* The id of a refused request is destroyed by the caller once its event is acknowledged:
 * rdma_destroy_id waits for that, so destroying it first would never return. */
static void refuse(struct rdma_session *s, struct rdma_cm_id *id, const char *why)
{
        s->refused++;
        (void)rdma_reject(id, why, (uint8_t)(strlen(why) + 1));
}

/* 0: accepted; 1: refused (the caller destroys the id after the ack); <0: a local failure. */
static int accept_request(struct rdma_session *s, struct rdma_cm_event *ev, char *err, size_t err_size)
{
        struct rdma_cm_id *id = ev->id;
        struct rdma_conn_data d;
        struct rdma_accept_data a = { 0 };
        struct rdma_conn_param param = { .retry_count = 7, .rnr_retry_count = 7 };
        struct rdma_rail_res *rr = NULL;
        struct rdma_conn *c;
        char why[96];
        int r;

        r = rdma_conn_data_check(ev->param.conn.private_data, ev->param.conn.private_data_len, s->token, &d,
                                 why, sizeof(why));
        if (r == 0 && d.rail < s->n_rails)
                rr = &s->rails[d.rail];
        if (r == 0 && (!rr || d.qp >= RDMA_QPS_MAX || rr->conns[d.qp].id)) {
                snprintf(why, sizeof(why), "rail %u queue pair %u is not free", d.rail, d.qp);
                r = -EPROTO;
        }
        if (r < 0) {
                refuse(s, id, why);
                return 1;
        }
        c = &rr->conns[d.qp];
        c->index = d.qp;
        /* The client's buffers set the size; what this side registers is bounded all the same. */
        s->half = d.size;
        if ((r = rdma_memlock_check(s->registered + 2ULL * d.size, err, err_size)) < 0) {
                char reason[RDMA_REJECT_REASON_MAX];
                struct rlimit rl = { 0 };

                /* The numbers travel with the refusal: the client's error may reach the initiator
                 * before this side's own does. */
                (void)getrlimit(RLIMIT_MEMLOCK, &rl);
                snprintf(reason, sizeof(reason),
                         "its RLIMIT_MEMLOCK (ulimit -l) is %llu KiB, below the %llu KiB to register: raise "
                         "it "
                         "(LimitMEMLOCK=infinity)",
                         (unsigned long long)(rl.rlim_cur >> 10),
                         (unsigned long long)((s->registered + 2ULL * d.size) >> 10));
                refuse(s, id, reason);
                c->id = id; /* the session ends: closing it destroys the id */
                return r;
        }
        s->registered += 2ULL * d.size;
        if ((r = rdma_rail_res_open(s, rr, id->verbs, err, err_size)) < 0 ||
            (r = rdma_conn_res_open(s, rr, c, id, err, err_size)) < 0)
                return r;
        id->context = c;
        c->remote_addr = d.addr;
        c->rkey = d.rkey;
        c->remote_half = d.size;
        if (d.qp + 1u > rr->n_conns)
                rr->n_conns = d.qp + 1u;
        a.rkey = htobe32(c->mr->rkey);
        a.addr = htobe64((uintptr_t)c->buf);
        a.size = htobe32((uint32_t)c->half);
        a.n_rails = (uint8_t)s->n_rails;
        for (size_t i = 0; i < s->n_rails; i++) {
                struct sockaddr_storage ss;

                (void)rail_sockaddr(&s->rails[i].rail, 0, &ss);
                a.port[i] = htons(s->rails[i].listen_port);
                a.family[i] = ss.ss_family == AF_INET6 ? 6 : 4;
                if (ss.ss_family == AF_INET6)
                        memcpy(a.address[i], &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
                else
                        memcpy(a.address[i], &((struct sockaddr_in *)&ss)->sin_addr, 4);
        }
        param.private_data = &a;
        param.private_data_len = sizeof(a);
        if (rdma_accept(id, &param) < 0)
                return rdma_verbs_error(err, err_size, "rdma_accept", rr->rail.device, errno);
        return 0;
}

int rdma_server_events(struct rdma_session *s, int timeout_ms, char *err, size_t err_size)
{
        struct rdma_cm_id *refused;
        struct rdma_cm_event *ev;
        int r;

        while ((r = next_event(s, timeout_ms, &ev, err, err_size)) == 0) {
                /* NULL for a connection request (the listening ids have none); an accepted one's is
                 * its rdma_conn. */
                struct rdma_conn *c = ev->id->context;

                timeout_ms = 0;
                switch (ev->event) {
                case RDMA_CM_EVENT_CONNECT_REQUEST:
                        r = accept_request(s, ev, err, err_size);
                        break;
                case RDMA_CM_EVENT_ESTABLISHED:
                        if (c) {
                                c->is_established = true;
                                r = rdma_conn_check_gid(c, err, err_size);
                        }
                        break;
                case RDMA_CM_EVENT_DISCONNECTED:
                        if (c)
                                c->is_established = false;
                        s->is_disconnected = true;
                        break;
                default:
                        break;
                }
                refused = r == 1 ? ev->id : NULL;
                rdma_ack_cm_event(ev);
                if (refused) {
                        rdma_destroy_id(refused);
                        r = 0;
                }
                if (r < 0)
                        return r;
        }
        return r == -EAGAIN ? 0 : r;
}

/* Waits for the event a client step needs; anything else ends the connection with its reason. */
static int wait_for(struct rdma_session *s, struct rdma_cm_id *id, enum rdma_cm_event_type want,
                    struct rdma_accept_data *accepted, char *err, size_t err_size)
{
        double until = probe_now() + PROBE_CONNECT_MS / 1000.0;
        struct rdma_cm_event *ev;
        int r;

        for (;;) {
                int left = (int)((until - probe_now()) * 1000);

                if (left <= 0) {
                        snprintf(err, err_size, "no %s from RDMA CM within %d ms", rdma_event_str(want),
                                 PROBE_CONNECT_MS);
                        return -ETIMEDOUT;
                }
                r = next_event(s, left, &ev, err, err_size);
                if (r == -EAGAIN)
                        continue;
                if (r < 0)
                        return r;
                if (ev->id != id) {
                        rdma_ack_cm_event(ev);
                        continue;
                }
                if (ev->event == want) {
                        if (accepted && ev->param.conn.private_data &&
                            ev->param.conn.private_data_len >= sizeof(*accepted))
                                memcpy(accepted, ev->param.conn.private_data, sizeof(*accepted));
                        rdma_ack_cm_event(ev);
                        return 0;
                }
                if (ev->event == RDMA_CM_EVENT_REJECTED) {
                        const char *data = ev->param.conn.private_data;
                        size_t len = 0;

                        /* Our server's reason is a short printable string; the kernel's own reject
                         * (nobody listening) carries zeros. */
                        while (data && len < ev->param.conn.private_data_len &&
                               len < RDMA_REJECT_REASON_MAX - 1 && data[len] >= 0x20 && data[len] < 0x7f)
                                len++;
                        if (len)
                                snprintf(err, err_size, "the server refused the connection: %.*s", (int)len,
                                         data);
                        else
                                snprintf(err, err_size,
                                         "the connection was rejected (RDMA CM status %d): is "
                                         "a " RDMA_PROBE_PROG " server listening at that address and port?",
                                         ev->status);
                } else {
                        snprintf(err, err_size, "%s where %s was expected (status %d)",
                                 rdma_event_str(ev->event), rdma_event_str(want), ev->status);
                }
                rdma_ack_cm_event(ev);
                return -ECONNREFUSED;
        }
}

static int connect_one(struct rdma_session *s, struct rdma_rail_res *rr, unsigned q,
                       const struct sockaddr_storage *dst, struct rdma_accept_data *accepted, char *err,
                       size_t err_size)
{
        struct rdma_conn *c = &rr->conns[q];
        struct rdma_cm_id *id;
        struct sockaddr_storage src;
        struct rdma_conn_data d;
        struct rdma_conn_param param = { .retry_count = 7, .rnr_retry_count = 7 };
        int r;

        if (rdma_create_id(s->channel, &id, c, RDMA_PS_TCP) < 0)
                return rdma_verbs_error(err, err_size, "rdma_create_id", rr->rail.device, errno);
        c->id = id;
        (void)rail_sockaddr(&rr->rail, 0, &src);
        if (rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)dst, RESOLVE_MS) < 0)
                return rdma_verbs_error(err, err_size, "rdma_resolve_addr", rr->rail.address, errno);
        if ((r = wait_for(s, id, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, err, err_size)) < 0)
                return r;
        if (strcmp(device_of(id), rr->rail.device) != 0) {
                snprintf(err, err_size, "RDMA CM resolved from %s on %s, not on %s", rr->rail.address,
                         device_of(id), rr->rail.device);
                return -ENODEV;
        }
        if (rdma_resolve_route(id, RESOLVE_MS) < 0)
                return rdma_verbs_error(err, err_size, "rdma_resolve_route", rr->rail.device, errno);
        if ((r = wait_for(s, id, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, err, err_size)) < 0)
                return r;
        if ((r = rdma_rail_res_open(s, rr, id->verbs, err, err_size)) < 0 ||
            (r = rdma_conn_res_open(s, rr, c, id, err, err_size)) < 0)
                return r;
        c->index = q;
        rdma_conn_data_pack(&d, s->token, (unsigned)(rr - s->rails), q, (uintptr_t)c->buf, c->mr->rkey,
                            (uint32_t)c->half);
        param.private_data = &d;
        param.private_data_len = sizeof(d);
        if (rdma_connect(id, &param) < 0)
                return rdma_verbs_error(err, err_size, "rdma_connect", rr->rail.device, errno);
        memset(accepted, 0, sizeof(*accepted));
        if ((r = wait_for(s, id, RDMA_CM_EVENT_ESTABLISHED, accepted, err, err_size)) < 0)
                return r;
        c->is_established = true;
        c->remote_addr = be64toh(accepted->addr);
        c->rkey = be32toh(accepted->rkey);
        c->remote_half = be32toh(accepted->size);
        if (c->remote_half < s->o->size || c->remote_half < s->o->lat_size) {
                snprintf(err, err_size, "the server's buffer (%u bytes) is below the message size",
                         c->remote_half);
                return -EPROTO;
        }
        rr->n_conns = q + 1;
        return rdma_conn_check_gid(c, err, err_size);
}

int rdma_client_connect(struct rdma_session *s, char *err, size_t err_size)
{
        struct sockaddr_storage dst[RDMA_RAILS_MAX];
        struct rdma_accept_data first, a;
        size_t n_remote;
        int r = open_channel(s, err, err_size);

        if (r < 0)
                return r;
        memset(dst, 0, sizeof(dst));
        dst[0].ss_family = AF_INET;
        ((struct sockaddr_in *)&dst[0])->sin_addr = s->o->args.remote;
        ((struct sockaddr_in *)&dst[0])->sin_port = htons(s->o->args.port);
        if ((r = connect_one(s, &s->rails[0], 0, &dst[0], &first, err, err_size)) < 0)
                return r;
        /* The server's other rails, as it told us; a twin is reached on its own link. */
        n_remote = first.n_rails < RDMA_RAILS_MAX ? first.n_rails : RDMA_RAILS_MAX;
        for (size_t i = 1; i < n_remote; i++) {
                if (first.family[i] == 6) {
                        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&dst[i];

                        in6->sin6_family = AF_INET6;
                        memcpy(&in6->sin6_addr, first.address[i], 16);
                        in6->sin6_port = first.port[i];
                        /* A link-local address means: on the link of our own rail i. */
                        in6->sin6_scope_id = i < s->n_rails ? if_nametoindex(s->rails[i].rail.netdev) : 0;
                } else {
                        struct sockaddr_in *in = (struct sockaddr_in *)&dst[i];

                        in->sin_family = AF_INET;
                        memcpy(&in->sin_addr, first.address[i], 4);
                        in->sin_port = first.port[i];
                }
        }
        if (n_remote < s->n_rails)
                s->n_rails = n_remote; /* the server has no twin to pair ours with */
        for (size_t i = 0; i < s->n_rails; i++)
                for (unsigned q = i == 0 ? 1 : 0; q < s->qps; q++)
                        if ((r = connect_one(s, &s->rails[i], q, &dst[i], &a, err, err_size)) < 0)
                                return r;
        return 0;
}

int rdma_ctl_wait(struct rdma_session *s, uint32_t type, double timeout_s, char *err, size_t err_size)
{
        double until = probe_now() + timeout_s;
        unsigned spins = 0;
        int r;

        while (!s->has_ctl_in) {
                r = rdma_cq_poll(s, &s->rails[0], err, err_size);
                if (r < 0)
                        return r;
                if (++spins % 4096 == 0) {
                        if (s->o->args.is_server && (r = rdma_server_events(s, 0, err, err_size)) < 0)
                                return r;
                        if (s->is_disconnected) {
                                snprintf(err, err_size, "the peer disconnected");
                                return -ECONNRESET;
                        }
                        if (probe_now() > until) {
                                snprintf(err, err_size, "no control message from the peer within %.0f s",
                                         timeout_s);
                                return -ETIMEDOUT;
                        }
                }
        }
        s->has_ctl_in = false;
        if (type && s->ctl_in.type != type) {
                snprintf(err, err_size, "control message %u from the peer where %u is expected",
                         s->ctl_in.type, type);
                return -EPROTO;
        }
        return 0;
}
