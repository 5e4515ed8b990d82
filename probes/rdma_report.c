/* sparkd-probe-rdma's figures: the connection data on the wire, the arithmetic, the result JSON. */
#include <endian.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_common.h"
#include "rdma_params.h"

void rdma_conn_data_pack(struct rdma_conn_data *d, const char *token, unsigned rail, unsigned qp,
                         uint64_t addr, uint32_t rkey, uint32_t size)
{
        memset(d, 0, sizeof(*d));
        if (token)
                memcpy(d->token, token, strnlen(token, RDMA_TOKEN_LEN));
        d->version = RDMA_CONN_VERSION;
        d->rail = (uint8_t)rail;
        d->qp = (uint8_t)qp;
        d->rkey = htobe32(rkey);
        d->addr = htobe64(addr);
        d->size = htobe32(size);
}

int rdma_conn_data_check(const void *data, size_t len, const char *token, struct rdma_conn_data *out,
                         char *why, size_t why_size)
{
        if (!data || len < sizeof(*out)) {
                snprintf(why, why_size, "%zu bytes of private data where %zu are expected", data ? len : 0,
                         sizeof(*out));
                return -EPROTO;
        }
        memcpy(out, data, sizeof(*out));
        if (token && !probe_token_equal(token, out->token, strnlen(out->token, RDMA_TOKEN_LEN))) {
                snprintf(why, why_size, "wrong token");
                return -EACCES;
        }
        if (out->version != RDMA_CONN_VERSION) {
                snprintf(why, why_size, "version %u where %u is spoken", out->version, RDMA_CONN_VERSION);
                return -EPROTO;
        }
        if (out->rail >= RDMA_RAILS_MAX || out->qp >= RDMA_QPS_MAX) {
                snprintf(why, why_size, "rail %u, queue pair %u: out of range", out->rail, out->qp);
                return -EPROTO;
        }
        out->rkey = be32toh(out->rkey);
        out->addr = be64toh(out->addr);
        out->size = be32toh(out->size);
        if (out->size == 0 || out->size > RDMA_SIZE_MAX) {
                snprintf(why, why_size, "a buffer of %u bytes", out->size);
                return -EPROTO;
        }
        return 0;
}

double rdma_gbps(uint64_t bytes, double seconds)
{
        return seconds > 0 ? (double)bytes * 8 / 1e9 / seconds : 0;
}

/* Per packet on the wire besides the payload: BTH 12 + ICRC 4 + UDP 8 + IPv4 20 + Ethernet
 * header 14 + FCS 4, and preamble 8 + inter-frame gap 12 that the line rate also spends. A
 * message's RETH (16 bytes once per message) is under 0.03 % at 64 KiB and left out. */
#define ROCE_V2_PACKET_OVERHEAD 82

double rdma_payload_gbps(int64_t speed_mbps, unsigned active_mtu)
{
        if (speed_mbps <= 0 || active_mtu == 0)
                return 0;
        return (double)speed_mbps / 1000 * active_mtu / (active_mtu + ROCE_V2_PACKET_OVERHEAD);
}

static int compare_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

/* perftest leaves out the highest samples (LAT_MEASURE_TAIL): a stray interrupt is no latency. */
#define LAT_MEASURE_TAIL 2

int rdma_latency_compute(double *rtt_us, size_t n, struct rdma_latency *out)
{
        double sum = 0, var = 0;

        if (n == 0)
                return -EINVAL;
        qsort(rtt_us, n, sizeof(*rtt_us), compare_double);
        if (n > LAT_MEASURE_TAIL)
                n -= LAT_MEASURE_TAIL;
        for (size_t i = 0; i < n; i++) {
                rtt_us[i] /= 2;
                sum += rtt_us[i];
        }
        *out = (struct rdma_latency){ .count = n, .min_us = rtt_us[0], .max_us = rtt_us[n - 1] };
        out->avg_us = sum / (double)n;
        for (size_t i = 0; i < n; i++)
                var += (rtt_us[i] - out->avg_us) * (rtt_us[i] - out->avg_us);
        out->stdev_us = sqrt(var / (double)n);
        out->typical_us = n % 2 ? rtt_us[n / 2] : (rtt_us[n / 2 - 1] + rtt_us[n / 2]) / 2;
        out->p99_us = probe_percentile(rtt_us, n, 99);
        out->p999_us = probe_percentile(rtt_us, n, 99.9);
        return 0;
}

json_object *rdma_direction_json(const char *direction, const char *from, const char *to,
                                 const struct rdma_rail_figures *rails, size_t n_rails)
{
        json_object *d = json_object_new_object(), *list = json_object_new_array();
        uint64_t bytes = 0, writes = 0;
        double seconds = 0;

        for (size_t i = 0; i < n_rails; i++) {
                const struct rdma_rail_figures *f = &rails[i];
                json_object *r = json_object_new_object();

                bytes += f->bytes;
                writes += f->writes;
                if (f->seconds > seconds)
                        seconds = f->seconds;
                json_object_object_add(r, "name", json_object_new_string(f->rail->device));
                json_object_object_add(r, "netdev", json_object_new_string(f->rail->netdev));
                json_object_object_add(r, "gbps", probe_json_double(rdma_gbps(f->bytes, f->seconds), 3));
                json_object_object_add(r, "bytes", json_object_new_int64((int64_t)f->bytes));
                json_object_object_add(r, "duration_s", probe_json_double(f->seconds, 3));
                json_object_object_add(r, "qps", json_object_new_int((int)f->qps));
                json_object_object_add(r, "gid_index", json_object_new_int(f->rail->gid_index));
                json_object_array_add(list, r);
        }
        json_object_object_add(d, "direction", json_object_new_string(direction));
        json_object_object_add(d, "from", json_object_new_string(from));
        json_object_object_add(d, "to", json_object_new_string(to));
        /* The rails run side by side: the port moved all bytes in the longest rail's time. */
        json_object_object_add(d, "gbps", probe_json_double(rdma_gbps(bytes, seconds), 3));
        json_object_object_add(d, "bytes", json_object_new_int64((int64_t)bytes));
        json_object_object_add(d, "duration_s", probe_json_double(seconds, 3));
        json_object_object_add(d, "msg_rate_mpps",
                               probe_json_double(seconds > 0 ? (double)writes / seconds / 1e6 : 0, 6));
        json_object_object_add(d, "rails", list);
        return d;
}

json_object *rdma_latency_json(const struct rdma_latency *lat, unsigned size, unsigned iterations)
{
        json_object *o = json_object_new_object();

        json_object_object_add(o, "iterations", json_object_new_int((int)iterations));
        json_object_object_add(o, "size", json_object_new_int((int)size));
        json_object_object_add(o, "min_us", probe_json_double(lat->min_us, 3));
        json_object_object_add(o, "max_us", probe_json_double(lat->max_us, 3));
        json_object_object_add(o, "typical_us", probe_json_double(lat->typical_us, 3));
        json_object_object_add(o, "avg_us", probe_json_double(lat->avg_us, 3));
        json_object_object_add(o, "stdev_us", probe_json_double(lat->stdev_us, 3));
        json_object_object_add(o, "p99_us", probe_json_double(lat->p99_us, 3));
        json_object_object_add(o, "p99_9_us", probe_json_double(lat->p999_us, 3));
        return o;
}

json_object *rdma_rails_json(const struct rdma_rail *rails, size_t n)
{
        json_object *a = json_object_new_array();

        for (size_t i = 0; i < n; i++) {
                json_object *r = json_object_new_object();

                json_object_object_add(r, "name", json_object_new_string(rails[i].device));
                json_object_object_add(r, "port", json_object_new_int((int)rails[i].port));
                json_object_object_add(r, "netdev", json_object_new_string(rails[i].netdev));
                json_object_object_add(r, "gid_index", json_object_new_int(rails[i].gid_index));
                json_object_object_add(r, "gid", json_object_new_string(rails[i].gid));
                json_object_object_add(r, "address", json_object_new_string(rails[i].address));
                json_object_object_add(r, "active_mtu",
                                       rails[i].active_mtu ? json_object_new_int((int)rails[i].active_mtu)
                                                           : NULL);
                json_object_object_add(r, "speed_gbps",
                                       rails[i].speed_mbps > 0
                                               ? probe_json_double((double)rails[i].speed_mbps / 1000, 1)
                                               : NULL);
                json_object_array_add(a, r);
        }
        return a;
}

double rdma_port_expected_gbps(const struct rdma_rail *rails, size_t n)
{
        return n > 0 ? rdma_payload_gbps(rails[0].speed_mbps, rails[0].active_mtu) : 0;
}
