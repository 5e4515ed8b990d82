#include "probe_common.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/macro.h"

/* ---- pure ---- */

double probe_gbps(uint64_t bytes, double seconds)
{
        if (!(seconds > 0))
                return 0;
        return (double)bytes * 8 / 1e9 / seconds;
}

double probe_percentile(const double *sorted, size_t n, double p)
{
        size_t rank;

        if (n == 0)
                return 0;
        /* Nearest rank: the smallest sample with at least p% of the samples at or below it. */
        rank = (size_t)ceil(p / 100.0 * (double)n);
        if (rank < 1)
                rank = 1;
        if (rank > n)
                rank = n;
        return sorted[rank - 1];
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

int probe_stats_compute(double *samples, size_t n, struct probe_stats *out)
{
        double sum = 0;

        if (n == 0)
                return -EINVAL;
        qsort(samples, n, sizeof(*samples), cmp_double);
        for (size_t i = 0; i < n; i++)
                sum += samples[i];
        *out = (struct probe_stats){
                .count = n,
                .min = samples[0],
                .median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2,
                .p99 = probe_percentile(samples, n, 99),
                .max = samples[n - 1],
                .mean = sum / (double)n,
        };
        return 0;
}

bool probe_token_equal(const char *expected, const char *got, size_t got_len)
{
        size_t len = strlen(expected);

        /* Every byte looked at whatever differs, so the time taken tells nothing of where. The
         * helpers do without libcrypto: a helper is started for every probe (at 32 nodes a dozen
         * a second in an rtt round), and loading it was most of the start. */
        volatile unsigned char differ = 0;

        if (got_len != len)
                return false;
        for (size_t i = 0; i < len; i++)
                differ |= (unsigned char)(expected[i] ^ got[i]);
        return differ == 0;
}

int probe_token_from_env(const char **out)
{
        const char *t = getenv(PROBE_TOKEN_ENV);

        *out = NULL;
        if (!t)
                return 0;
        if (!*t || strlen(t) > PROBE_TOKEN_MAX || strpbrk(t, "\r\n"))
                return -EINVAL;
        *out = t;
        return 0;
}

json_object *probe_json_double(double v, int decimals)
{
        char buf[64];

        if (!isfinite(v))
                return NULL;
        snprintf(buf, sizeof(buf), "%.*f", decimals, v);
        /* "-0.0" reads oddly in a result; it can only come from rounding. */
        if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
                memmove(buf, buf + 1, strlen(buf));
        return json_object_new_double_s(strtod(buf, NULL), buf);
}

json_object *probe_result_error(const char *kind, const char *phase, const char *error)
{
        json_object *r = json_object_new_object();

        json_object_object_add(r, "kind", json_object_new_string(kind));
        json_object_object_add(r, "ok", json_object_new_boolean(false));
        json_object_object_add(r, "error", json_object_new_string(error));
        json_object_object_add(r, "phase", json_object_new_string(phase));
        return r;
}

json_object *probe_result_line(json_object *result)
{
        json_object *line = json_object_new_object();

        json_object_object_add(line, "result", result);
        return line;
}

int probe_hello_format(const char *token, const struct probe_hello *hello, char *buf, size_t size,
                       size_t *len)
{
        _cleanup_json_ json_object *h = json_object_new_object();
        int n;

        json_object_object_add(h, "kind", json_object_new_string(hello->kind));
        json_object_object_add(h, "version", json_object_new_int((int)hello->version));
        json_object_object_add(h, "session", json_object_new_string(hello->session));
        json_object_object_add(h, "streams", json_object_new_int((int)hello->streams));
        json_object_object_add(h, "stream", json_object_new_int((int)hello->stream));
        json_object_object_add(h, "size", json_object_new_int64((int64_t)hello->size));
        json_object_object_add(h, "count", json_object_new_int64((int64_t)hello->count));
        if (hello->reverse_ms)
                json_object_object_add(h, "reverse_ms", json_object_new_int64((int64_t)hello->reverse_ms));
        n = snprintf(buf, size, "%s\n%s\n", token ? token : "",
                     json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN));
        if (n < 0 || (size_t)n >= size)
                return -ENOBUFS;
        *len = (size_t)n;
        return 0;
}

static int hello_uint(json_object *h, const char *key, uint64_t max, uint64_t *out)
{
        json_object *v;
        int64_t i;

        if (!json_object_object_get_ex(h, key, &v) || !json_object_is_type(v, json_type_int))
                return -EPROTO;
        i = json_object_get_int64(v);
        if (i < 0 || (uint64_t)i > max)
                return -EPROTO;
        *out = (uint64_t)i;
        return 0;
}

int probe_hello_parse(const char *buf, size_t len, const char *expected_token, struct probe_hello *hello,
                      char *why, size_t why_size)
{
        _cleanup_json_ json_object *h = NULL;
        const char *nl1, *nl2, *s;
        json_object *v;
        uint64_t version, streams, stream;
        char line[PROBE_HELLO_MAX];

        nl1 = memchr(buf, '\n', len);
        if (!nl1)
                return len > PROBE_TOKEN_MAX + 1 ? -EACCES : -EAGAIN;
        /* The token first, before anything a stranger sent is parsed any further. */
        if (expected_token && !probe_token_equal(expected_token, buf, (size_t)(nl1 - buf))) {
                snprintf(why, why_size, nl1 == buf ? "missing token" : "wrong token");
                return -EACCES;
        }
        nl2 = memchr(nl1 + 1, '\n', len - (size_t)(nl1 + 1 - buf));
        if (!nl2)
                return -EAGAIN;
        if ((size_t)(nl2 - nl1 - 1) >= sizeof(line)) {
                snprintf(why, why_size, "hello line too long");
                return -EPROTO;
        }
        memcpy(line, nl1 + 1, (size_t)(nl2 - nl1 - 1));
        line[nl2 - nl1 - 1] = '\0';
        h = json_tokener_parse(line);
        if (!h || !json_object_is_type(h, json_type_object)) {
                snprintf(why, why_size, "hello is not a JSON object");
                return -EPROTO;
        }
        *hello = (struct probe_hello){ 0 };
        if (!json_object_object_get_ex(h, "kind", &v) || !json_object_is_type(v, json_type_string) ||
            strlen(s = json_object_get_string(v)) >= sizeof(hello->kind)) {
                snprintf(why, why_size, "hello without a valid kind");
                return -EPROTO;
        }
        strcpy(hello->kind, s);
        if (hello_uint(h, "version", UINT32_MAX, &version) < 0) {
                snprintf(why, why_size, "hello without a version");
                return -EPROTO;
        }
        hello->version = (unsigned)version;
        if (version != PROBE_PROTO_VERSION) {
                snprintf(why, why_size, "protocol version %u is not supported (this side speaks %u)",
                         hello->version, PROBE_PROTO_VERSION);
                return -EPROTO;
        }
        if (!json_object_object_get_ex(h, "session", &v) || !json_object_is_type(v, json_type_string) ||
            strlen(s = json_object_get_string(v)) >= sizeof(hello->session) || !*s) {
                snprintf(why, why_size, "hello without a valid session");
                return -EPROTO;
        }
        strcpy(hello->session, s);
        if (hello_uint(h, "streams", 1024, &streams) < 0 || streams == 0 ||
            hello_uint(h, "stream", 1023, &stream) < 0 || stream >= streams ||
            hello_uint(h, "size", UINT32_MAX, &hello->size) < 0 ||
            hello_uint(h, "count", UINT32_MAX, &hello->count) < 0) {
                snprintf(why, why_size, "hello with invalid streams, stream, size or count");
                return -EPROTO;
        }
        /* Optional: a client that measures one direction only leaves it out. */
        if (json_object_object_get_ex(h, "reverse_ms", NULL) &&
            hello_uint(h, "reverse_ms", 86400 * 1000, &hello->reverse_ms) < 0) {
                snprintf(why, why_size, "hello with an invalid reverse_ms");
                return -EPROTO;
        }
        hello->streams = (unsigned)streams;
        hello->stream = (unsigned)stream;
        return 0;
}

double probe_json_number(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && v ? json_object_get_double(v) : 0;
}

const char *probe_json_text(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : "?";
}

/* ---- process: output, phases, the deadline ---- */

static struct {
        const char *kind;
        bool is_json;
        probe_human_fn human;
        const char *phase;
        /* What the deadline prints: built ahead for each phase, because a signal handler may not
         * allocate. Two buffers, so the handler never sees one half written. */
        char timeout_line[2][256];
        size_t timeout_len[2];
        volatile sig_atomic_t timeout_idx;
        volatile sig_atomic_t has_result;
        double deadline_at;
} out = { .kind = "probe", .is_json = true, .phase = "setup" };

static void timeout_line_build(void)
{
        int idx = !out.timeout_idx, n;

        if (out.is_json)
                n = snprintf(out.timeout_line[idx], sizeof(out.timeout_line[idx]),
                             "{\"result\":{\"kind\":\"%s\",\"ok\":false,\"error\":\"timeout\",\"phase\":\"%"
                             "s\"}}\n",
                             out.kind, out.phase);
        else
                n = snprintf(out.timeout_line[idx], sizeof(out.timeout_line[idx]),
                             "%s probe failed: timeout (deadline passed in phase %s)\n", out.kind,
                             out.phase);
        out.timeout_len[idx] = n < 0 ? 0 : (size_t)n;
        out.timeout_idx = idx;
}

void probe_output_init(const char *kind, bool force_json, probe_human_fn human)
{
        out.kind = kind;
        out.human = human;
        out.is_json = force_json || !human || !isatty(STDOUT_FILENO);
        timeout_line_build();
}

void probe_phase(const char *phase)
{
        out.phase = phase;
        timeout_line_build();
}

static void on_deadline(int sig)
{
        int idx = out.timeout_idx;

        /* A result is out already: only the exit is left to do. */
        if (!out.has_result) {
                ssize_t n = write(STDOUT_FILENO, out.timeout_line[idx], out.timeout_len[idx]);
                (void)n;
        }
        _exit(1);
}

static void write_line(const char *s, size_t len)
{
        while (len > 0) {
                ssize_t n = write(STDOUT_FILENO, s, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return;
                s += n;
                len -= (size_t)n;
        }
}

void probe_emit(json_object *line)
{
        sigset_t block, old;
        bool is_result = json_object_object_get_ex(line, "result", NULL);

        /* The deadline must not cut into a line, nor print a second result after this one. */
        sigemptyset(&block);
        sigaddset(&block, SIGALRM);
        pthread_sigmask(SIG_BLOCK, &block, &old);
        if (out.is_json) {
                size_t len;
                const char *s = json_object_to_json_string_length(
                        line, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
                _cleanup_free_ char *buf = malloc(len + 1);

                if (buf) {
                        memcpy(buf, s, len);
                        buf[len] = '\n';
                        write_line(buf, len + 1);
                }
        } else {
                out.human(line);
                fflush(stdout);
        }
        if (is_result)
                out.has_result = 1;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        json_object_put(line);
}

int probe_start(const struct probe_helper *helper, int argc, char **argv, struct probe_args *args, void *own,
                const char **token)
{
        int r = probe_cmdline_read(helper->cmdline, argc, argv, args, own);

        if (r)
                return r;
        if (token && probe_token_from_env(token) < 0)
                return probe_usage_error(helper->cmdline->prog,
                                         PROBE_TOKEN_ENV " is set but empty, longer than %d bytes or "
                                                         "has a line break",
                                         PROBE_TOKEN_MAX);
        probe_output_init(helper->kind, args->is_json, helper->human);
        if (probe_deadline_arm(args->deadline) < 0)
                return probe_fail("cannot arm the deadline: %s", strerror(errno));
        return 0;
}

int probe_main(const struct probe_helper *helper, int argc, char **argv, struct probe_args *args, void *own)
{
        const char *token;
        int r = probe_start(helper, argc, argv, args, own, &token);

        if (r)
                return r;
        return args->is_server ? helper->server(own, token) : helper->client(own, token);
}

int probe_fail(const char *fmt, ...)
{
        char msg[PROBE_ERROR_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        probe_emit(probe_result_line(probe_result_error(out.kind, out.phase, msg)));
        return 1;
}

double probe_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void probe_sleep_until(double t)
{
        struct timespec ts = { .tv_sec = (time_t)t, .tv_nsec = (long)((t - (double)(time_t)t) * 1e9) };

        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
}

int probe_deadline_arm(double seconds)
{
        struct sigaction sa = { .sa_handler = on_deadline };
        struct itimerval it = { 0 };

        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGALRM, &sa, NULL) < 0)
                return -errno;
        it.it_value.tv_sec = (time_t)seconds;
        it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
        if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
                it.it_value.tv_usec = 1;
        out.deadline_at = probe_now() + seconds;
        if (setitimer(ITIMER_REAL, &it, NULL) < 0)
                return -errno;
        return 0;
}

double probe_deadline_left(void)
{
        double left = out.deadline_at - probe_now();

        return left > 0 ? left : 0;
}

int probe_wait_ms(int max_ms)
{
        double left = probe_deadline_left() * 1000 + 1;

        return left < max_ms ? (int)left : max_ms;
}

json_object *probe_connecting_line(const struct probe_args *args)
{
        json_object *line = json_object_new_object();

        probe_phase("connecting");
        json_object_object_add(line, "phase", json_object_new_string("connecting"));
        json_object_object_add(line, "remote", json_object_new_string(args->remote_arg));
        json_object_object_add(line, "port", json_object_new_int(args->port));
        return line;
}

bool probe_human_failed(json_object *result)
{
        json_object *ok;

        if (!json_object_object_get_ex(result, "ok", &ok) || json_object_get_boolean(ok))
                return false;
        printf("%s probe failed in phase %s: %s\n", out.kind, probe_json_text(result, "phase"),
               probe_json_text(result, "error"));
        return true;
}

bool probe_human_common(json_object *line)
{
        json_object *r;

        if (json_object_object_get_ex(line, "result", &r))
                return probe_human_failed(r);
        if (strcmp(probe_json_text(line, "phase"), "listening") != 0)
                return false;
        printf("listening on %s port %.0f\n", probe_json_text(line, "address"),
               probe_json_number(line, "port"));
        return true;
}
