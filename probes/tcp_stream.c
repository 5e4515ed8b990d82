#include "tcp_stream.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/macro.h"
#include "probe_common.h"

#define RECV_SIZE (256 * 1024)

/* ---- sending: the client, and the server in the reverse direction ---- */

json_object *tcp_retransmits(const struct tcp_stream *s, unsigned n)
{
        uint64_t sum = 0;

        for (unsigned i = 0; i < n; i++) {
                struct tcp_info ti = { 0 };
                socklen_t len = sizeof(ti);

                if (getsockopt(s[i].fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 ||
                    len < offsetof(struct tcp_info, tcpi_total_retrans) + sizeof(ti.tcpi_total_retrans))
                        return NULL;
                sum += ti.tcpi_total_retrans;
        }
        return json_object_new_int64((int64_t)sum);
}

static void emit_progress(double elapsed, uint64_t sent)
{
        json_object *line = json_object_new_object();

        json_object_object_add(line, "phase", json_object_new_string("running"));
        json_object_object_add(line, "elapsed_s", probe_json_double(elapsed, 1));
        json_object_object_add(line, "gbps", probe_json_double(probe_gbps(sent, elapsed), 3));
        json_object_object_add(line, "bytes_sent", json_object_new_int64((int64_t)sent));
        probe_emit(line);
}

static void *sender_run(void *arg)
{
        struct tcp_stream *s = arg;

        while (probe_now() < s->send_until) {
                ssize_t n = send(s->fd, s->buf, s->size, MSG_NOSIGNAL);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        s->error = errno;
                        break;
                }
                __atomic_fetch_add(&s->sent, (uint64_t)n, __ATOMIC_RELAXED);
        }
        __atomic_store_n(&s->stopped, true, __ATOMIC_RELEASE);
        return NULL;
}

static int start_threads(struct tcp_stream *s, unsigned n, void *(*fn)(void *))
{
        sigset_t block, old;
        int r = 0;

        /* The deadline's signal goes to the main thread only. */
        sigfillset(&block);
        pthread_sigmask(SIG_BLOCK, &block, &old);
        for (unsigned i = 0; i < n && r == 0; i++) {
                r = -pthread_create(&s[i].thread, NULL, fn, &s[i]);
                if (r < 0) {
                        for (unsigned j = 0; j < i; j++)
                                pthread_join(s[j].thread, NULL);
                }
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return r;
}

static bool all_stopped(struct tcp_stream *s, unsigned n)
{
        for (unsigned i = 0; i < n; i++)
                if (!__atomic_load_n(&s[i].stopped, __ATOMIC_ACQUIRE))
                        return false;
        return true;
}

int tcp_send_for(struct tcp_stream *s, unsigned n, double duration, uint64_t size)
{
        _cleanup_free_ char *buf = malloc(size);
        double start, end, next_progress;
        int r;

        if (!buf)
                return probe_fail("out of memory");
        for (uint64_t i = 0; i < size; i++)
                buf[i] = (char)(i * 131 + (i >> 8));
        start = probe_now();
        end = start + duration;
        for (unsigned i = 0; i < n; i++) {
                s[i].buf = buf;
                s[i].size = size;
                s[i].send_until = end;
        }
        r = start_threads(s, n, sender_run);
        if (r < 0)
                return probe_fail("cannot start a sending thread: %s", strerror(-r));
        for (next_progress = start + 1; next_progress < end; next_progress += 1) {
                uint64_t total = 0;

                /* A peer that went away ends every stream at once: no waiting out the time. */
                while (!all_stopped(s, n) && probe_now() < next_progress)
                        probe_sleep_until(probe_now() + 0.1 < next_progress ? probe_now() + 0.1
                                                                            : next_progress);
                if (all_stopped(s, n))
                        break;
                for (unsigned i = 0; i < n; i++)
                        total += __atomic_load_n(&s[i].sent, __ATOMIC_RELAXED);
                emit_progress(probe_now() - start, total);
        }
        for (unsigned i = 0; i < n; i++)
                pthread_join(s[i].thread, NULL);
        for (unsigned i = 0; i < n; i++)
                if (s[i].error)
                        return probe_fail("stream %u: sending failed: %s", i, strerror(s[i].error));
        return 0;
}

/* ---- receiving: the server, and the client in the reverse direction ---- */

static void *receiver_run(void *arg)
{
        struct tcp_stream *s = arg;
        _cleanup_free_ char *buf = malloc(RECV_SIZE);

        if (!buf) {
                s->error = ENOMEM;
                return NULL;
        }
        for (;;) {
                ssize_t n = recv(s->fd, buf, RECV_SIZE, 0);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        s->error = errno;
                        break;
                }
                if (n == 0) {
                        s->ended = probe_now();
                        break;
                }
                if (s->first_byte == 0)
                        s->first_byte = probe_now();
                s->received += (uint64_t)n;
        }
        return NULL;
}

int tcp_receive_all(struct tcp_stream *s, unsigned n, double *first_byte, double *last_end)
{
        int r = start_threads(s, n, receiver_run);

        if (r < 0)
                return probe_fail("cannot start a receiving thread: %s", strerror(-r));
        for (unsigned i = 0; i < n; i++)
                pthread_join(s[i].thread, NULL);
        *first_byte = 0;
        *last_end = 0;
        for (unsigned i = 0; i < n; i++) {
                if (s[i].error)
                        return probe_fail("stream %u: receiving failed: %s", i, strerror(s[i].error));
                if (s[i].first_byte > 0 && (*first_byte == 0 || s[i].first_byte < *first_byte))
                        *first_byte = s[i].first_byte;
                if (s[i].ended > *last_end)
                        *last_end = s[i].ended;
        }
        return 0;
}
