/* sparkd-probe-rdma's verbs resources: memory within the memlock limit, PDs, CQs, QPs, and the
 * control messages on the first queue pair. Every verbs call's failure names the call. */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "probe_common.h"
#include "rdma_session.h"

#define WRID_CTL_RECV (1ULL << 63)
#define WRID_CTL_SEND (1ULL << 62)
#define CQ_BATCH      32
/* perftest's inline limit for RDMA WRITE: small ping-pong messages go in the WQE itself. */
#define MAX_INLINE_WRITE 220

int rdma_verbs_error(char *err, size_t err_size, const char *call, const char *device, int errnum)
{
        if (errnum <= 0)
                errnum = EIO;
        snprintf(err, err_size, "%s on %s: %s (errno %d)", call, device, strerror(errnum), errnum);
        return -errnum;
}

static bool has_ipc_lock(void)
{
        /* Without libcap: the effective capability set from /proc is enough to know. */
        FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        unsigned long long eff = 0;

        if (!f)
                return geteuid() == 0;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "CapEff: %llx", &eff) == 1)
                        break;
        fclose(f);
        return eff & (1ULL << 14); /* CAP_IPC_LOCK */
}

int rdma_memlock_check(uint64_t bytes, char *err, size_t err_size)
{
        struct rlimit rl;

        if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || bytes <= rl.rlim_cur ||
            has_ipc_lock())
                return 0;
        snprintf(err, err_size,
                 "registering %llu KiB of RDMA memory needs a memlock limit above it, and this process's "
                 "RLIMIT_MEMLOCK (ulimit -l) is %llu KiB: raise it (memlock unlimited in "
                 "/etc/security/limits.conf, LimitMEMLOCK=infinity for sparkd.service) or use fewer --qps "
                 "or a smaller --size",
                 (unsigned long long)(bytes >> 10), (unsigned long long)(rl.rlim_cur >> 10));
        return -ENOMEM;
}

static int memlock_error(char *err, size_t err_size, const char *device, size_t bytes, int errnum)
{
        struct rlimit rl;
        char limit[32] = "unknown";

        if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
                snprintf(limit, sizeof(limit), rl.rlim_cur == RLIM_INFINITY ? "unlimited" : "%llu KiB",
                         (unsigned long long)(rl.rlim_cur >> 10));
        snprintf(err, err_size,
                 "ibv_reg_mr of %zu bytes on %s: %s (errno %d); RLIMIT_MEMLOCK (ulimit -l) is %s: raise it "
                 "(memlock unlimited, LimitMEMLOCK=infinity)",
                 bytes, device, strerror(errnum), errnum, limit);
        return -errnum;
}

int rdma_rail_res_open(struct rdma_session *s, struct rdma_rail_res *rr, struct ibv_context *verbs,
                       char *err, size_t err_size)
{
        int depth = (int)(s->qps * (s->o->tx_depth + 8) + 8);

        if (rr->pd)
                return 0;
        rr->verbs = verbs;
        rr->pd = ibv_alloc_pd(verbs);
        if (!rr->pd)
                return rdma_verbs_error(err, err_size, "ibv_alloc_pd", rr->rail.device, errno);
        rr->cq = ibv_create_cq(verbs, depth, NULL, NULL, 0);
        if (!rr->cq)
                return rdma_verbs_error(err, err_size, "ibv_create_cq", rr->rail.device, errno);
        if (rr == &s->rails[0]) {
                s->ctl = aligned_alloc(64, 2 * sizeof(*s->ctl));
                if (!s->ctl)
                        return -ENOMEM;
                memset(s->ctl, 0, 2 * sizeof(*s->ctl));
                s->ctl_mr = ibv_reg_mr(rr->pd, s->ctl, 2 * sizeof(*s->ctl), IBV_ACCESS_LOCAL_WRITE);
                if (!s->ctl_mr)
                        return memlock_error(err, err_size, rr->rail.device, 2 * sizeof(*s->ctl), errno);
        }
        return 0;
}

static int ctl_post_recv(struct rdma_session *s, char *err, size_t err_size)
{
        struct ibv_sge sge = { .addr = (uintptr_t)&s->ctl[1],
                               .length = sizeof(s->ctl[1]),
                               .lkey = s->ctl_mr->lkey };
        struct ibv_recv_wr wr = { .wr_id = WRID_CTL_RECV, .sg_list = &sge, .num_sge = 1 }, *bad;
        int r = ibv_post_recv(s->rails[0].conns[0].id->qp, &wr, &bad);

        return r ? rdma_verbs_error(err, err_size, "ibv_post_recv", s->rails[0].rail.device, r) : 0;
}

int rdma_conn_res_open(struct rdma_session *s, struct rdma_rail_res *rr, struct rdma_conn *c,
                       struct rdma_cm_id *id, char *err, size_t err_size)
{
        struct ibv_qp_init_attr attr = {
                .send_cq = rr->cq,
                .recv_cq = rr->cq,
                .qp_type = IBV_QPT_RC,
                .cap = { .max_send_wr = s->o->tx_depth + 8,
                         .max_recv_wr = 4,
                         .max_send_sge = 1,
                         .max_recv_sge = 1,
                         .max_inline_data = s->o->lat_size <= MAX_INLINE_WRITE ? MAX_INLINE_WRITE : 0 },
        };
        int r;

        c->id = id;
        c->rr = rr;
        c->half = s->half;
        c->buf = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), 2 * s->half);
        if (!c->buf)
                return -ENOMEM;
        memset(c->buf, 0, 2 * s->half);
        c->mr = ibv_reg_mr(rr->pd, c->buf, 2 * s->half, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
        if (!c->mr)
                return memlock_error(err, err_size, rr->rail.device, 2 * s->half, errno);
        if (rdma_create_qp(id, rr->pd, &attr) < 0) {
                /* Some devices refuse inline data: the latency loop then copies from the buffer. */
                attr.cap.max_inline_data = 0;
                if (rdma_create_qp(id, rr->pd, &attr) < 0)
                        return rdma_verbs_error(err, err_size, "rdma_create_qp", rr->rail.device, errno);
        }
        c->max_inline = attr.cap.max_inline_data;
        if (rr == &s->rails[0] && c == &rr->conns[0] && (r = ctl_post_recv(s, err, err_size)) < 0)
                return r;
        return 0;
}

int rdma_conn_check_gid(struct rdma_conn *c, char *err, size_t err_size)
{
        struct ibv_qp_attr attr;
        struct ibv_qp_init_attr init;
        int r = ibv_query_qp(c->id->qp, &attr, IBV_QP_AV, &init);

        if (r)
                return rdma_verbs_error(err, err_size, "ibv_query_qp", c->rr->rail.device, r);
        if ((int)attr.ah_attr.grh.sgid_index != c->rr->rail.gid_index) {
                snprintf(err, err_size,
                         "RDMA CM sent from GID index %u of %s, but the RoCE v2 GID of %s is index %d: make "
                         "RoCE v2 RDMA CM's default "
                         "(/sys/kernel/config/rdma_cm/%s/ports/%u/default_roce_mode)",
                         attr.ah_attr.grh.sgid_index, c->rr->rail.device, c->rr->rail.address,
                         c->rr->rail.gid_index, c->rr->rail.device, c->rr->rail.port);
                return -EPROTO;
        }
        return 0;
}

void rdma_session_close(struct rdma_session *s)
{
        for (size_t i = 0; i < RDMA_RAILS_MAX; i++) {
                struct rdma_rail_res *rr = &s->rails[i];

                for (unsigned q = 0; q < RDMA_QPS_MAX; q++) {
                        struct rdma_conn *c = &rr->conns[q];

                        if (c->id) {
                                if (c->is_established)
                                        rdma_disconnect(c->id);
                                if (c->id->qp)
                                        rdma_destroy_qp(c->id);
                                rdma_destroy_id(c->id);
                        }
                        if (c->mr)
                                ibv_dereg_mr(c->mr);
                        free(c->buf);
                        memset(c, 0, sizeof(*c));
                }
                if (i == 0 && s->ctl_mr)
                        ibv_dereg_mr(s->ctl_mr);
                if (rr->cq)
                        ibv_destroy_cq(rr->cq);
                if (rr->pd)
                        ibv_dealloc_pd(rr->pd);
                if (rr->listen_id)
                        rdma_destroy_id(rr->listen_id);
                rr->cq = NULL;
                rr->pd = NULL;
                rr->listen_id = NULL;
        }
        free(s->ctl);
        s->ctl = NULL;
        s->ctl_mr = NULL;
        if (s->channel)
                rdma_destroy_event_channel(s->channel);
        s->channel = NULL;
}

static void ctl_to_host(struct rdma_ctl_msg *m)
{
        m->magic = be32toh(m->magic);
        m->type = be32toh(m->type);
        m->a = be64toh(m->a);
        m->b = be64toh(m->b);
        m->size = be64toh(m->size);
        for (size_t i = 0; i < RDMA_RAILS_MAX; i++) {
                m->bytes[i] = be64toh(m->bytes[i]);
                m->writes[i] = be64toh(m->writes[i]);
                m->ns[i] = be64toh(m->ns[i]);
        }
}

int rdma_cq_poll(struct rdma_session *s, struct rdma_rail_res *rr, char *err, size_t err_size)
{
        struct ibv_wc wc[CQ_BATCH];
        int n = ibv_poll_cq(rr->cq, CQ_BATCH, wc);

        if (n < 0)
                return rdma_verbs_error(err, err_size, "ibv_poll_cq", rr->rail.device, EIO);
        for (int i = 0; i < n; i++) {
                /* The control RECV flushed: the peer disconnected (after its last message). */
                if (wc[i].status == IBV_WC_WR_FLUSH_ERR && wc[i].wr_id == WRID_CTL_RECV) {
                        s->is_disconnected = true;
                        continue;
                }
                if (wc[i].status != IBV_WC_SUCCESS) {
                        snprintf(err, err_size, "work completion on %s: %s (status %d, vendor error 0x%x)",
                                 rr->rail.device, ibv_wc_status_str(wc[i].status), wc[i].status,
                                 wc[i].vendor_err);
                        return -EIO;
                }
                if (wc[i].wr_id == WRID_CTL_RECV) {
                        s->ctl_in = s->ctl[1];
                        ctl_to_host(&s->ctl_in);
                        s->has_ctl_in = s->ctl_in.magic == RDMA_CTL_MAGIC;
                        if (ctl_post_recv(s, err, err_size) < 0)
                                return -EIO;
                } else if (wc[i].wr_id != WRID_CTL_SEND) {
                        /* A write's wr_id: the queue pair, and the writes the completion covers. */
                        unsigned q = (unsigned)(wc[i].wr_id & 0xff);

                        if (q < RDMA_QPS_MAX)
                                rr->conns[q].completed += wc[i].wr_id >> 8;
                }
        }
        return n;
}

int rdma_ctl_send(struct rdma_session *s, const struct rdma_ctl_msg *m, char *err, size_t err_size)
{
        struct rdma_conn *c = &s->rails[0].conns[0];
        struct ibv_sge sge = { .addr = (uintptr_t)&s->ctl[0],
                               .length = sizeof(s->ctl[0]),
                               .lkey = s->ctl_mr->lkey };
        struct ibv_send_wr wr = { .wr_id = WRID_CTL_SEND,
                                  .sg_list = &sge,
                                  .num_sge = 1,
                                  .opcode = IBV_WR_SEND,
                                  .send_flags = IBV_SEND_SIGNALED },
                           *bad;
        struct rdma_ctl_msg *out = &s->ctl[0];
        int r;

        out->magic = htobe32(RDMA_CTL_MAGIC);
        out->type = htobe32(m->type);
        out->a = htobe64(m->a);
        out->b = htobe64(m->b);
        out->size = htobe64(m->size);
        for (size_t i = 0; i < RDMA_RAILS_MAX; i++) {
                out->bytes[i] = htobe64(m->bytes[i]);
                out->writes[i] = htobe64(m->writes[i]);
                out->ns[i] = htobe64(m->ns[i]);
        }
        r = ibv_post_send(c->id->qp, &wr, &bad);
        return r ? rdma_verbs_error(err, err_size, "ibv_post_send", c->rr->rail.device, r) : 0;
}

int rdma_write_post(struct rdma_conn *c, uint32_t size, uint64_t wr_id, unsigned flags, char *err,
                    size_t err_size)
{
        struct ibv_sge sge = { .addr = (uintptr_t)(c->buf + c->half), .length = size, .lkey = c->mr->lkey };
        struct ibv_send_wr wr = {
                .wr_id = wr_id,
                .sg_list = &sge,
                .num_sge = 1,
                .opcode = IBV_WR_RDMA_WRITE,
                .send_flags = flags,
                .wr.rdma = { .remote_addr = c->remote_addr, .rkey = c->rkey },
        };
        struct ibv_send_wr *bad;
        int r = ibv_post_send(c->id->qp, &wr, &bad);

        if (r)
                return rdma_verbs_error(err, err_size, "ibv_post_send (RDMA WRITE)", c->rr->rail.device, r);
        c->posted++;
        return 0;
}
