#include "nccl_report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const op_names[NCCL_OP_COUNT] = { "all_reduce", "all_gather" };

const char *nccl_op_name(enum nccl_op op)
{
        return op < NCCL_OP_COUNT ? op_names[op] : "?";
}

int nccl_op_from_name(const char *name, enum nccl_op *out)
{
        for (int i = 0; i < NCCL_OP_COUNT; i++)
                if (strcmp(op_names[i], name) == 0) {
                        *out = (enum nccl_op)i;
                        return 0;
                }
        return -EINVAL;
}

size_t nccl_sizes(uint64_t min, uint64_t max, uint64_t factor, uint64_t *out, size_t max_sizes)
{
        size_t n = 0;

        if (min == 0 || factor < 2)
                return 0;
        for (uint64_t size = min; size <= max && n < max_sizes; size *= factor) {
                out[n++] = size;
                if (size > max / factor)
                        break;
        }
        return n;
}

void nccl_counts(enum nccl_op op, uint64_t size, int nranks, struct nccl_counts *out)
{
        size_t count = (size_t)(size / sizeof(float));

        if (op == NCCL_OP_ALL_GATHER) {
                /* Each rank contributes a whole number of 16-byte chunks. */
                size_t part = (count / (size_t)nranks) & ~(size_t)3;

                out->send_count = part;
                out->recv_count = part * (size_t)nranks;
        } else {
                out->send_count = count;
                out->recv_count = count;
        }
        out->bytes = (uint64_t)out->recv_count * sizeof(float);
}

double nccl_algbw(uint64_t bytes, double seconds)
{
        return seconds > 0 ? (double)bytes / 1e9 / seconds : 0;
}

double nccl_busbw(enum nccl_op op, double algbw, int nranks)
{
        double n = nranks;

        if (nranks < 1)
                return 0;
        return op == NCCL_OP_ALL_REDUCE ? algbw * 2 * (n - 1) / n : algbw * (n - 1) / n;
}

float nccl_pattern(size_t i, int rank)
{
        /* 1..64 by a multiplicative hash of the index, shifted by the rank: neighbours differ, so
         * a shifted or truncated copy is caught. */
        uint32_t h = (uint32_t)i * 2654435761u;

        return (float)((h >> 26) + 1 + (uint32_t)rank);
}

float nccl_expected(enum nccl_op op, size_t i, size_t send_count, int nranks)
{
        float sum = 0;

        if (op == NCCL_OP_ALL_GATHER)
                return send_count ? nccl_pattern(i % send_count, (int)(i / send_count)) : 0;
        for (int r = 0; r < nranks; r++)
                sum += nccl_pattern(i, r);
        return sum;
}

bool nccl_check(enum nccl_op op, const float *out, size_t recv_count, size_t send_count, int nranks,
                struct nccl_mismatch *m)
{
        *m = (struct nccl_mismatch){ 0 };
        for (size_t i = 0; i < recv_count; i++) {
                float want = nccl_expected(op, i, send_count, nranks);

                /* Bit-exact: the values are whole numbers, and NaN (the fill) never equals. */
                if (out[i] == want)
                        continue;
                if (m->wrong++ == 0) {
                        m->first = i;
                        m->got = out[i];
                        m->expected = want;
                }
        }
        return m->wrong == 0;
}

/* ---- NCCL's INFO log ---- */

static void copy_trimmed(char *dst, size_t size, const char *src, size_t len)
{
        while (len && (*src == ' ' || *src == '\t')) {
                src++;
                len--;
        }
        while (len &&
               (src[len - 1] == ' ' || src[len - 1] == '\n' || src[len - 1] == '\r' || src[len - 1] == '\t'))
                len--;
        if (len >= size)
                len = size - 1;
        memcpy(dst, src, len);
        dst[len] = '\0';
}

/* "[0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]" into "mlx5_0:1/RoCE mlx5_1:1/RoCE". */
static void device_list(char *dst, size_t size, const char *src, size_t len)
{
        size_t used = 0;

        dst[0] = '\0';
        for (size_t i = 0; i < len;) {
                size_t start, end;

                if (src[i] != '[') {
                        i++;
                        continue;
                }
                start = i;
                while (i < len && src[i] != ']')
                        i++;
                /* "[RO]" (relaxed ordering) is a flag, not a device: devices start "[N]". */
                if (i >= len || start + 1 == i || strspn(src + start + 1, "0123456789") != i - start - 1)
                        continue;
                start = ++i;
                while (i < len && src[i] != ' ' && src[i] != ';')
                        i++;
                end = i;
                if (end > start && used + (end - start) + 2 < size) {
                        if (used)
                                dst[used++] = ' ';
                        memcpy(dst + used, src + start, end - start);
                        used += end - start;
                        dst[used] = '\0';
                }
        }
}

static void path_add(struct nccl_transport *t, const char *path, size_t len)
{
        size_t used = strlen(t->paths);
        const char *p = t->paths;

        while (*p) {
                size_t n = strcspn(p, ",");

                if (n == len && strncmp(p, path, len) == 0)
                        return;
                p += n + (p[n] == ',');
        }
        if (used + len + 2 < sizeof(t->paths))
                snprintf(t->paths + used, sizeof(t->paths) - used, "%s%.*s", used ? "," : "", (int)len,
                         path);
}

/* "... via NET/IB/0/GDRDMA", "via P2P/CUMEM/read", "via P2P/direct pointer", "via SHM/direct/direct":
 * the transport and its kind, "NET/IB", "P2P/CUMEM", "SHM/direct". */
static void parse_channel(struct nccl_transport *t, const char *via)
{
        size_t len = strcspn(via, " \n");
        const char *slash = memchr(via, '/', len), *second;

        t->channels++;
        if (!slash)
                return;
        second = memchr(slash + 1, '/', len - (size_t)(slash + 1 - via));
        path_add(t, via, second ? (size_t)(second - via) : len);
        if (strncmp(via, "NET/", 4) == 0 && memmem(via, len, "/GDRDMA", 7))
                t->gdr_used = true;
}

static bool starts(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

void nccl_transport_parse_line(struct nccl_transport *t, const char *line)
{
        const char *msg = strstr(line, "NCCL INFO "), *via;

        if (!msg) {
                msg = strstr(line, "NCCL WARN ");
                if (msg)
                        copy_trimmed(t->last_warning, sizeof(t->last_warning), msg + 10, strlen(msg + 10));
                return;
        }
        msg += 10;
        if (starts(msg, "Using network ")) {
                copy_trimmed(t->network, sizeof(t->network), msg + 14, strlen(msg + 14));
        } else if (starts(msg, "NET/IB : No device found")) {
                t->ib_no_device = true;
        } else if (starts(msg, "NET/IB : Using")) {
                device_list(t->ib_devices, sizeof(t->ib_devices), msg + 14, strcspn(msg + 14, ";\n"));
        } else if (starts(msg, "NET/Socket : Using")) {
                device_list(t->socket_devices, sizeof(t->socket_devices), msg + 18, strcspn(msg + 18, "\n"));
        } else if (strstr(msg, "GPU Direct RDMA Enabled for HCA")) {
                t->gdr_enabled_hcas++;
        } else if (strstr(msg, "GPU Direct RDMA Disabled for HCA")) {
                t->gdr_disabled_hcas++;
        } else if (starts(msg, "Channel ") && (via = strstr(msg, " via "))) {
                parse_channel(t, via + 5);
        }
}

bool nccl_transport_socket_fallback(const struct nccl_transport *t, const char *rdma_devices)
{
        bool socket = strcasecmp(t->network, "Socket") == 0 || strstr(t->paths, "NET/Socket");

        return socket && rdma_devices && rdma_devices[0];
}

json_object *nccl_transport_to_json(const struct nccl_transport *t, const char *rdma_devices)
{
        json_object *o = json_object_new_object(), *paths = json_object_new_array();
        const char *p = t->paths;

        while (*p) {
                size_t n = strcspn(p, ",");

                json_object_array_add(paths, json_object_new_string_len(p, (int)n));
                p += n + (p[n] == ',');
        }
        json_object_object_add(o, "network", t->network[0] ? json_object_new_string(t->network) : NULL);
        json_object_object_add(o, "paths", paths);
        json_object_object_add(o, "channels", json_object_new_int((int)t->channels));
        if (t->ib_devices[0])
                json_object_object_add(o, "ib_devices", json_object_new_string(t->ib_devices));
        if (t->socket_devices[0])
                json_object_object_add(o, "socket_devices", json_object_new_string(t->socket_devices));
        json_object_object_add(o, "ib_device_found",
                               t->ib_devices[0]  ? json_object_new_boolean(true)
                               : t->ib_no_device ? json_object_new_boolean(false)
                                                 : NULL);
        json_object_object_add(o, "gdr_enabled_hcas", json_object_new_int((int)t->gdr_enabled_hcas));
        json_object_object_add(o, "gdr_disabled_hcas", json_object_new_int((int)t->gdr_disabled_hcas));
        json_object_object_add(o, "gdr_used", json_object_new_boolean(t->gdr_used));
        json_object_object_add(o, "node_rdma_devices",
                               json_object_new_string(rdma_devices ? rdma_devices : ""));
        json_object_object_add(o, "socket_fallback",
                               json_object_new_boolean(nccl_transport_socket_fallback(t, rdma_devices)));
        if (t->last_warning[0])
                json_object_object_add(o, "last_warning", json_object_new_string(t->last_warning));
        return o;
}

/* ---- hangs ---- */

bool nccl_env_allows_gdr(const char *level)
{
        return !level || !level[0] || (strcasecmp(level, "LOC") != 0 && strcmp(level, "0") != 0);
}

json_object *nccl_hang_diagnose(const struct nccl_hang *h, char *error, size_t error_size)
{
        json_object *o = json_object_new_object();
        char cause[384] = "", fix[256] = "", waited[32];

        if (h->unified_memory && nccl_env_allows_gdr(h->gdr_level)) {
                bool no_dmabuf = h->dmabuf_enable && strcmp(h->dmabuf_enable, "0") == 0;
                unsigned hcas = h->transport ? h->transport->gdr_enabled_hcas : 0;
                char seen[64] = "";

                if (hcas)
                        snprintf(seen, sizeof(seen), ", and NCCL enabled it for %u HCA%s", hcas,
                                 hcas == 1 ? "" : "s");
                snprintf(cause, sizeof(cause),
                         "GPU Direct RDMA is allowed (NCCL_NET_GDR_LEVEL=%s%s) on a unified-memory GPU%s: "
                         "registering its memory through nvidia_peermem%s does not work there, and NCCL "
                         "waits forever without an error",
                         h->gdr_level && h->gdr_level[0] ? h->gdr_level : "unset",
                         no_dmabuf ? ", NCCL_DMABUF_ENABLE=0" : "", seen,
                         no_dmabuf ? "" : " (what NCCL falls back to without DMA-BUF)");
                snprintf(fix, sizeof(fix),
                         "safe mode: sparkc probe --mode safe, and for jobs sparkc env --mode safe "
                         "(NCCL_NET_GDR_LEVEL=LOC, NCCL_DMABUF_ENABLE=0); dmabuf mode needs the open kernel "
                         "module 580 or later");
        }
        json_object_object_add(o, "hang_in", json_object_new_string(h->call));
        json_object_object_add(o, "phase", json_object_new_string(h->phase));
        json_object_object_add(o, "waited_s",
                               json_object_new_double((double)(long)(h->waited_sec * 1000) / 1000));
        json_object_object_add(o, "cause", cause[0] ? json_object_new_string(cause) : NULL);
        json_object_object_add(o, "fix", fix[0] ? json_object_new_string(fix) : NULL);
        /* A deadline shorter than a second (a test, a tight init timeout) reads in milliseconds. */
        if (h->waited_sec < 1)
                snprintf(waited, sizeof(waited), "%.0f ms", h->waited_sec * 1000);
        else
                snprintf(waited, sizeof(waited), "%.1f s", h->waited_sec);
        if (cause[0])
                snprintf(error, error_size,
                         "hang in %s: not done after %s; GPU Direct RDMA on a unified-memory GPU "
                         "(nvidia_peermem) hangs NCCL init: use safe mode (sparkc probe --mode safe)",
                         h->call, waited);
        else
                snprintf(error, error_size, "hang in %s: not done after %s (phase %s)%s%s", h->call, waited,
                         h->phase, h->transport && h->transport->last_warning[0] ? "; NCCL warned: " : "",
                         h->transport && h->transport->last_warning[0] ? h->transport->last_warning : "");
        return o;
}
