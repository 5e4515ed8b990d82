/*
 * The latency loop, perftest's write_lat method: one queue pair (rail 0's first), messages of a
 * few bytes written inline where the device allows it, and both sides polling memory rather than
 * waiting for completions. The client writes a sequence number into the last byte of the
 * server's inbox and spins until the server's write of the same number lands in its own; the
 * server spins on its inbox and answers each number at once. A round trip is measured from the
 * post to the answer; the figure is half of it, as ib_write_lat prints.
 */
#include <errno.h>
#include <stdio.h>

#include "probe_common.h"
#include "rdma_session.h"

/* How long one round trip may take before the peer counts as gone. */
#define ROUND_TRIP_TIMEOUT_S 5.0

static int post(struct rdma_conn *c, unsigned size, char *err, size_t err_size)
{
        unsigned flags = IBV_SEND_SIGNALED | (size <= c->max_inline ? IBV_SEND_INLINE : 0);

        return rdma_write_post(c, size, (1ULL << 8) | c->index, flags, err, err_size);
}

/* Spins until the inbox's last byte is seq. */
static int wait_byte(const volatile uint8_t *in, uint8_t seq, char *err, size_t err_size)
{
        double until = 0;

        for (unsigned spins = 1; *in != seq; spins++) {
                if (spins % (1u << 16) == 0) {
                        double now = probe_now();

                        if (until == 0)
                                until = now + ROUND_TRIP_TIMEOUT_S;
                        else if (now > until) {
                                snprintf(err, err_size, "no answer to ping-pong write %u within %.0f s", seq,
                                         ROUND_TRIP_TIMEOUT_S);
                                return -ETIMEDOUT;
                        }
                }
        }
        return 0;
}

/* Reaps the write's completion, so the send queue never fills. */
static int reap(struct rdma_session *s, struct rdma_conn *c, char *err, size_t err_size)
{
        double until = probe_now() + ROUND_TRIP_TIMEOUT_S;

        while (c->completed < c->posted) {
                int r = rdma_cq_poll(s, c->rr, err, err_size);

                if (r < 0)
                        return r;
                if (r == 0 && probe_now() > until) {
                        snprintf(err, err_size, "the ping-pong write did not complete within %.0f s",
                                 ROUND_TRIP_TIMEOUT_S);
                        return -ETIMEDOUT;
                }
        }
        return 0;
}

static uint8_t sequence(unsigned i)
{
        return (uint8_t)(i % 255 + 1); /* never 0, the inbox's first content */
}

int rdma_lat_ping(struct rdma_session *s, unsigned iters, unsigned size, double *rtt_us, char *err,
                  size_t err_size)
{
        struct rdma_conn *c = &s->rails[0].conns[0];
        const volatile uint8_t *in = (const volatile uint8_t *)c->buf + size - 1;
        uint8_t *out = (uint8_t *)c->buf + c->half + size - 1;
        int r;

        c->posted = c->completed = 0;
        for (unsigned i = 0; i < iters; i++) {
                double t0;

                *out = sequence(i);
                t0 = probe_now();
                if ((r = post(c, size, err, err_size)) < 0 ||
                    (r = wait_byte(in, sequence(i), err, err_size)) < 0)
                        return r;
                rtt_us[i] = (probe_now() - t0) * 1e6;
                if ((r = reap(s, c, err, err_size)) < 0)
                        return r;
        }
        return 0;
}

int rdma_lat_pong(struct rdma_session *s, unsigned iters, unsigned size, char *err, size_t err_size)
{
        struct rdma_conn *c = &s->rails[0].conns[0];
        const volatile uint8_t *in = (const volatile uint8_t *)c->buf + size - 1;
        uint8_t *out = (uint8_t *)c->buf + c->half + size - 1;
        int r;

        if (size > c->half || size == 0) {
                snprintf(err, err_size, "ping-pong size %u does not fit the %zu-byte buffer", size, c->half);
                return -EPROTO;
        }
        c->posted = c->completed = 0;
        for (unsigned i = 0; i < iters; i++) {
                if ((r = wait_byte(in, sequence(i), err, err_size)) < 0)
                        return r;
                *out = sequence(i);
                if ((r = post(c, size, err, err_size)) < 0 || (r = reap(s, c, err, err_size)) < 0)
                        return r;
        }
        return 0;
}
