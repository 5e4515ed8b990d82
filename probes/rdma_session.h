/*
 * sparkd-probe-rdma's live state: per rail (RDMA device of the port) a protection domain, one
 * completion queue and its RC queue pairs, each queue pair an RDMA CM connection with its own
 * registered buffer (an inbox the peer writes into, then an outbox writes are sent from). Queue
 * pair 0 of rail 0 also carries the few control messages that pace the two sides (SEND/RECV).
 */
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdma_params.h"

enum rdma_ctl_type {
        RDMA_CTL_REVERSE = 1, /* client -> server: write to me now; a = duration ms, b = writes per QP */
        RDMA_CTL_REPORT,      /* server -> client: what the reverse direction moved */
        RDMA_CTL_LATENCY,     /* client -> server: ping-pong now; a = iterations, b = size */
        RDMA_CTL_BYE,         /* client -> server: done */
};

#define RDMA_CTL_MAGIC 0x53504b52u /* "SPKR" */

/* Big-endian on the wire. */
struct rdma_ctl_msg {
        uint32_t magic;
        uint32_t type;
        uint64_t a, b;
        uint64_t size; /* REVERSE: the message size */
        uint64_t bytes[RDMA_RAILS_MAX];
        uint64_t writes[RDMA_RAILS_MAX];
        uint64_t ns[RDMA_RAILS_MAX];
};

struct rdma_rail_res;

struct rdma_conn {
        struct rdma_cm_id *id;
        struct rdma_rail_res *rr;
        unsigned index;
        char *buf; /* 2 * half bytes: the inbox, then the outbox */
        size_t half;
        struct ibv_mr *mr;
        uint64_t remote_addr; /* the peer's inbox */
        uint32_t rkey;
        uint32_t remote_half;
        uint64_t posted, completed;
        uint64_t target;         /* writes to post in this run */
        uint64_t last_signalled; /* posted count at the last signalled write */
        bool is_established;
        unsigned max_inline;
};

struct rdma_rail_res {
        struct rdma_rail rail;
        struct ibv_context *verbs;
        struct ibv_pd *pd;
        struct ibv_cq *cq;
        struct rdma_conn conns[RDMA_QPS_MAX];
        unsigned n_conns;
        struct rdma_cm_id *listen_id;
        uint16_t listen_port;
};

struct rdma_session {
        const struct rdma_options *o;
        const char *token; /* NULL: none asked for */
        struct rdma_event_channel *channel;
        struct rdma_rail_res rails[RDMA_RAILS_MAX];
        size_t n_rails;
        size_t half;         /* per connection: max(size, lat_size), page-rounded */
        uint64_t registered; /* bytes of buffers registered so far */
        unsigned qps;
        /* control messages on rails[0].conns[0]: [0] what is sent, [1] what arrives */
        struct rdma_ctl_msg *ctl;
        struct ibv_mr *ctl_mr;
        bool has_ctl_in;
        struct rdma_ctl_msg ctl_in; /* host order */
        /* server: the peer's rails as it told us; refused connections */
        unsigned refused;
        bool is_disconnected;
};

/* ---- rdma_verbs_res.c: resources, completions, control messages ---- */

/* Fails (message naming RLIMIT_MEMLOCK, ulimit -l and how to raise it) when bytes of registered
 * memory cannot fit under this process's memlock limit. */
int rdma_memlock_check(uint64_t bytes, char *err, size_t err_size);
/* The PD and CQ of rail rr on the device of verbs (on first use). */
int rdma_rail_res_open(struct rdma_session *s, struct rdma_rail_res *rr, struct ibv_context *verbs,
                       char *err, size_t err_size);
/* The buffer, its registration and the RC QP of connection c on id; the control RECV when c is
 * rail 0's queue pair 0. */
int rdma_conn_res_open(struct rdma_session *s, struct rdma_rail_res *rr, struct rdma_conn *c,
                       struct rdma_cm_id *id, char *err, size_t err_size);
/* The GID index RDMA CM's route took must be the rail's (the inventory's RoCE v2 GID). */
int rdma_conn_check_gid(struct rdma_conn *c, char *err, size_t err_size);
void rdma_session_close(struct rdma_session *s);
/* Polls rr's CQ once: write completions add to their connection's completed count, a control
 * message is kept in s->ctl_in. Returns completions seen or -EIO (error status) with err. */
int rdma_cq_poll(struct rdma_session *s, struct rdma_rail_res *rr, char *err, size_t err_size);
int rdma_ctl_send(struct rdma_session *s, const struct rdma_ctl_msg *m, char *err, size_t err_size);
/* Posts an RDMA WRITE of size bytes from c's outbox to the peer's inbox (send flags IBV_SEND_*) and
 * counts it in c->posted. */
int rdma_write_post(struct rdma_conn *c, uint32_t size, uint64_t wr_id, unsigned flags, char *err,
                    size_t err_size);
/* "ibv_reg_mr on DEV: Cannot allocate memory (errno 12)" into err; returns -errno. */
int rdma_verbs_error(char *err, size_t err_size, const char *call, const char *device, int errnum);

/* ---- rdma_cm_setup.c: connections, and waiting on them ---- */

int rdma_server_listen(struct rdma_session *s, char *err, size_t err_size);
/* Handles CM events that are waiting (none: returns at once, or waits up to timeout_ms):
 * connection requests (token checked, refused without it), established and disconnected. */
int rdma_server_events(struct rdma_session *s, int timeout_ms, char *err, size_t err_size);
/* Connects qps queue pairs per rail, pairing local rail i with the server's rail i. */
int rdma_client_connect(struct rdma_session *s, char *err, size_t err_size);
/* Waits for a control message of type (0: any) until the deadline; on the server, also for the CM's
 * disconnect (-ECONNRESET): the connections' events are read here. */
int rdma_ctl_wait(struct rdma_session *s, uint32_t type, double timeout_s, char *err, size_t err_size);

/* ---- rdma_bw.c, rdma_lat.c ---- */

/* Writes of size bytes on every connection of every rail (this side sends) for duration_s, or
 * iters writes per QP when iters > 0; figures per rail. */
int rdma_bw_send(struct rdma_session *s, uint64_t size, double duration_s, uint64_t iters,
                 struct rdma_rail_figures *figures, char *err, size_t err_size);
/* Ping-pong on rail 0's queue pair 0: the client pings (round trips in rtt_us), the server pongs. */
int rdma_lat_ping(struct rdma_session *s, unsigned iters, unsigned size, double *rtt_us, char *err,
                  size_t err_size);
int rdma_lat_pong(struct rdma_session *s, unsigned iters, unsigned size, char *err, size_t err_size);
