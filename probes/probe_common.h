/*
 * What the probe helpers (sparkd-probe-tcp, sparkd-probe-rtt) share. The contract with whoever
 * runs them (the daemon's probe.c, or a person): one JSON object per stdout line, progress lines
 * {"phase": ...} and exactly one final {"result": {...}} line; exit 0 on success, 1 on failure
 * (timeout included), 2 on a bad command line; a deadline that nothing can outlive.
 *
 * The data connections start with a handshake: the client sends "TOKEN\n" (the value of
 * SPARKD_PROBE_TOKEN, or an empty line without it) and one JSON hello line; the server answers
 * one JSON line, {"ok":true} or {"ok":false,"error":...}, and only then data flows.
 *
 * The first part (statistics, JSON building, the handshake's wire format) is pure and
 * unit-tested; the second part touches stdout, signals and clocks. The command line is
 * probe_cmdline.h's, the data connections probe_session.h's.
 */
#pragma once

#include <json-c/json.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe_cmdline.h"

#define PROBE_PROTO_VERSION   1
#define PROBE_TOKEN_ENV       "SPARKD_PROBE_TOKEN"
#define PROBE_TOKEN_MAX       128
#define PROBE_HELLO_MAX       512   /* token line + hello line, and the server's answer line */
#define PROBE_AUTH_TIMEOUT_MS 2000  /* a connection must authenticate within this */
#define PROBE_CONNECT_MS      10000 /* connect + handshake, also bounded by the deadline */
#define PROBE_ERROR_MAX       256

/* json_object references released at the end of their scope. */
static inline void probe_json_putp(json_object **j)
{
        json_object_put(*j);
}
#define _cleanup_json_ __attribute__((cleanup(probe_json_putp)))

/* ---- pure ---- */

/* Decimal gigabits per second, as iperf3 counts them; 0 when no time has passed. */
double probe_gbps(uint64_t bytes, double seconds);

struct probe_stats {
        size_t count;
        double min, median, p99, max, mean;
};
/* The value at percentile p (0 < p <= 100) of sorted samples, by nearest rank. */
double probe_percentile(const double *sorted, size_t n, double p);
/* Sorts the samples in place. The median is the middle sample, or the mean of the two middle
 * ones for an even count; p99 is by nearest rank. -EINVAL for no samples. */
int probe_stats_compute(double *samples, size_t n, struct probe_stats *out);

/* Token comparison in time independent of where they differ (the length is no secret). */
bool probe_token_equal(const char *expected, const char *got, size_t got_len);
/* The token from the environment: NULL when unset (by-hand use, no token needed); -EINVAL when
 * set but empty, too long or with a line break in it. */
int probe_token_from_env(const char **out);

/* A number rounded to `decimals` places, printed that way ("9.412", not 9.4119999999999999). */
json_object *probe_json_double(double v, int decimals);
/* {"kind":KIND,"ok":false,"error":ERROR,"phase":PHASE}. */
json_object *probe_result_error(const char *kind, const char *phase, const char *error);
/* {"result": RESULT}, taking RESULT. */
json_object *probe_result_line(json_object *result);

/* What a client says about itself after the token line. */
struct probe_hello {
        char kind[16];
        unsigned version;
        char session[24];    /* random per client run: the streams of one run share it */
        unsigned streams;    /* connections in this session (tcp); 1 for rtt */
        unsigned stream;     /* which one this is, 0-based */
        uint64_t size;       /* message size (rtt) or write size (tcp) */
        uint64_t count;      /* round trips (rtt) */
        uint64_t reverse_ms; /* tcp: how long the server sends back after the client's turn; 0 none */
};

/* "TOKEN\n{hello}\n" into buf; -ENOBUFS when it does not fit. */
int probe_hello_format(const char *token, const struct probe_hello *hello, char *buf, size_t size,
                       size_t *len);
/* Reads what a connection sent so far. Returns 0 with *hello filled when both lines are there and
 * the token matches (any token does when expected_token is NULL); -EAGAIN when more bytes are
 * needed; -EACCES for a wrong token; -EPROTO for anything else malformed, with a reason in why. */
int probe_hello_parse(const char *buf, size_t len, const char *expected_token, struct probe_hello *hello,
                      char *why, size_t why_size);

/* For the human output: a member's number (0 when absent) or text ("?" when absent). */
double probe_json_number(json_object *o, const char *key);
const char *probe_json_text(json_object *o, const char *key);

/* ---- process: output, phases, the deadline ---- */

/* How a final or progress line looks for a person, when stdout is a terminal. */
typedef void (*probe_human_fn)(json_object *line);

/* What a helper is, to probe_start. */
struct probe_helper {
        const char *kind;                    /* its results' "kind" */
        probe_human_fn human;                /* its lines for a person */
        const struct probe_cmdline *cmdline; /* its options */
        /* A socket helper's two sides, for probe_main: options is its own options, the ones the
         * command line was read into. Each returns the exit status. */
        int (*server)(const void *options, const char *token);
        int (*client)(const void *options, const char *token);
};

/* What every helper does first: reads its command line into args and own (probe_cmdline_read:
 * --help and --version exit here), the token from the environment into *token (with token NULL:
 * the helper reads none), sets up the output (JSON or human) and arms the deadline. 0 to go on,
 * else the exit status: 2 for a wrong command line or a malformed token, 1 when the deadline
 * cannot be armed (its failure result printed). */
int probe_start(const struct probe_helper *helper, int argc, char **argv, struct probe_args *args, void *own,
                const char **token);
/* A socket helper's main: probe_start, then its server or its client. Returns the exit status. */
int probe_main(const struct probe_helper *helper, int argc, char **argv, struct probe_args *args, void *own);

/* Output as JSON lines when force_json or when stdout is no terminal, else through human. */
void probe_output_init(const char *kind, bool force_json, probe_human_fn human);
/* The phase the process is in: a timeout or failure names it. Takes a static string. */
void probe_phase(const char *phase);
/* For the human output of a result: prints "KIND probe failed in phase PHASE: ERROR" and returns
 * true when it says ok false; false for anything else. */
bool probe_human_failed(json_object *result);
/* The client's progress line {"phase":"connecting","remote":...,"port":...}, for the helper to add
 * to and emit; enters the phase "connecting". */
json_object *probe_connecting_line(const struct probe_args *args);
/* For the human output of the TCP helpers: a failed result and the server's listening line look
 * alike in each; prints those and returns true, false for the rest. */
bool probe_human_common(json_object *line);

/* Prints one line (JSON or human) and flushes it; takes the object. */
void probe_emit(json_object *line);
/* Prints the failure result for the current phase and returns 1, the exit code. */
int probe_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Arms the deadline: when it passes, the timeout result is printed and the process exits 1,
 * whatever it was blocked in. */
int probe_deadline_arm(double seconds);
/* Seconds left before the deadline (never negative). */
double probe_deadline_left(void);
/* CLOCK_MONOTONIC in seconds. */
double probe_now(void);
/* Sleeps until probe_now() reaches t, signals or not. */
void probe_sleep_until(double t);
/* Milliseconds for poll: at most max_ms, and never past the deadline. */
int probe_wait_ms(int max_ms);
