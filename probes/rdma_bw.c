/*
 * The bandwidth loop, perftest's write_bw method: every queue pair keeps at most tx_depth RDMA
 * WRITEs of one message size outstanding, one write in cq_mod asks for a completion (which then
 * stands for all writes since the last one), and one thread polls every rail's CQ. Bandwidth is
 * the bytes of all completed writes over the time from the first write posted to the last
 * completion, per rail; the port's figure is all rails' bytes over the longest of those times.
 * In duration mode the last writes are rounded up to a signalled one, so every write counted
 * has completed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "probe_common.h"
#include "rdma_session.h"

/* Without any completion for this long, the link or the peer is gone. */
#define STALL_S 10.0

static int post_write(struct rdma_conn *c, uint32_t size, bool signalled, char *err, size_t err_size)
{
        /* The writes this completion stands for, and the connection it is on. */
        uint64_t wr_id = ((c->posted + 1 - c->last_signalled) << 8) | c->index;
        int r = rdma_write_post(c, size, wr_id, signalled ? IBV_SEND_SIGNALED : 0, err, err_size);

        if (r == 0 && signalled)
                c->last_signalled = c->posted;
        return r;
}

static void progress(const struct rdma_session *s, uint64_t size, double elapsed)
{
        uint64_t bytes = 0;
        json_object *line = json_object_new_object();

        for (size_t i = 0; i < s->n_rails; i++)
                for (unsigned q = 0; q < s->rails[i].n_conns; q++)
                        bytes += s->rails[i].conns[q].completed * size;
        json_object_object_add(line, "phase", json_object_new_string("running"));
        json_object_object_add(line, "role",
                               json_object_new_string(s->o->args.is_server ? "server" : "client"));
        json_object_object_add(line, "elapsed_s", probe_json_double(elapsed, 1));
        json_object_object_add(line, "gbps", probe_json_double(rdma_gbps(bytes, elapsed), 3));
        probe_emit(line);
}

int rdma_bw_send(struct rdma_session *s, uint64_t size, double duration_s, uint64_t iters,
                 struct rdma_rail_figures *figures, char *err, size_t err_size)
{
        const unsigned depth = s->o->tx_depth, mod = s->o->cq_mod;
        double start = probe_now(), first[RDMA_RAILS_MAX] = { 0 }, last[RDMA_RAILS_MAX] = { 0 };
        double last_progress = start, last_completion = start;
        bool stopping = iters > 0, done = false;
        int r;

        for (size_t i = 0; i < s->n_rails; i++)
                for (unsigned q = 0; q < s->rails[i].n_conns; q++) {
                        struct rdma_conn *c = &s->rails[i].conns[q];

                        c->posted = c->completed = c->last_signalled = 0;
                        c->target = iters ? iters : UINT64_MAX;
                }
        while (!done) {
                double now = probe_now();

                if (!stopping && now - start >= duration_s) {
                        stopping = true;
                        /* Round each queue pair up to a signalled write: all counted writes complete. */
                        for (size_t i = 0; i < s->n_rails; i++)
                                for (unsigned q = 0; q < s->rails[i].n_conns; q++) {
                                        struct rdma_conn *c = &s->rails[i].conns[q];

                                        c->target = c->posted == c->last_signalled
                                                            ? c->posted
                                                            : (c->posted / mod + 1) * mod;
                                }
                }
                done = true;
                for (size_t i = 0; i < s->n_rails; i++) {
                        struct rdma_rail_res *rr = &s->rails[i];
                        bool rail_done;

                        for (unsigned q = 0; q < rr->n_conns; q++) {
                                struct rdma_conn *c = &rr->conns[q];

                                while (c->posted < c->target && c->posted - c->completed < depth) {
                                        bool sig = (c->posted + 1) % mod == 0 || c->posted + 1 == c->target;

                                        if (first[i] == 0)
                                                first[i] = probe_now();
                                        if ((r = post_write(c, (uint32_t)size, sig, err, err_size)) < 0)
                                                return r;
                                }
                        }
                        if ((r = rdma_cq_poll(s, rr, err, err_size)) < 0)
                                return r;
                        if (r > 0)
                                last[i] = last_completion = probe_now();
                        rail_done = true;
                        for (unsigned q = 0; q < rr->n_conns; q++)
                                if (rr->conns[q].completed < rr->conns[q].target)
                                        rail_done = false;
                        if (!rail_done)
                                done = false;
                }
                if (now - last_completion > STALL_S) {
                        snprintf(err, err_size,
                                 "no RDMA WRITE completed for %.0f s: the link or the peer is gone",
                                 STALL_S);
                        return -ETIMEDOUT;
                }
                if (now - last_progress >= 1.0) {
                        last_progress = now;
                        progress(s, size, now - start);
                }
        }
        for (size_t i = 0; i < s->n_rails; i++) {
                struct rdma_rail_res *rr = &s->rails[i];

                figures[i] = (struct rdma_rail_figures){ .rail = &rr->rail, .qps = rr->n_conns };
                for (unsigned q = 0; q < rr->n_conns; q++) {
                        figures[i].writes += rr->conns[q].completed;
                        figures[i].bytes += rr->conns[q].completed * size;
                }
                figures[i].seconds = last[i] > first[i] ? last[i] - first[i] : 0;
        }
        return 0;
}
