/*
 * The probe helpers' command lines, read from one declarative table per helper: each option
 * with its argument, the field its value goes to and the check it must pass. The options every
 * helper shares (--server, --client, --bind, --port, --deadline, --json, --help, --version) fill
 * struct probe_args; a helper's own options fill its own struct. The checks every helper makes
 * (one role, options only a client takes, the client's port, no stray arguments) are made here, so
 * every helper words its errors alike.
 *
 * Also the single value checks the table is made of, for a helper's own checks: each names the
 * option in its message.
 */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A byte count: plain, or with a binary suffix K, M, G (also KiB, MiB, GiB): "128K" = 131072. */
int probe_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Seconds as a decimal number within [min, max]: "30", "0.5". */
int probe_parse_seconds(const char *s, double min, double max, double *out);
/* A dotted IPv4 address; the empty string means any address (0.0.0.0). */
int probe_parse_ipv4(const char *s, struct in_addr *out);

/* Command-line values: on failure, a message naming the option ("--streams wants a whole number
 * from 1 to 64, not 0") is written to err and -EINVAL or -ERANGE returned. */
int probe_opt_uint(const char *name, const char *arg, uint64_t min, uint64_t max, uint64_t *out, char *err,
                   size_t err_size);
int probe_opt_size(const char *name, const char *arg, uint64_t min, uint64_t max, uint64_t *out, char *err,
                   size_t err_size);
int probe_opt_seconds(const char *name, const char *arg, double min, double max, double *out, char *err,
                      size_t err_size);
int probe_opt_ipv4(const char *name, const char *arg, bool allow_any, struct in_addr *out, char *err,
                   size_t err_size);

/* What every helper's command line says. */
struct probe_args {
        bool is_server;          /* --server */
        const char *remote_arg;  /* --client's value as given; NULL without --client */
        struct in_addr remote;   /* --client's address, where the helper wants one */
        struct in_addr bind;     /* --bind */
        bool has_bind;           /* --bind was given */
        uint16_t port;           /* --port */
        bool has_port;           /* --port was given */
        bool has_client_options; /* an option only a client takes was given */
        double deadline;         /* --deadline: seconds */
        bool is_json;            /* --json */
        bool want_help;          /* --help: parsing stopped there */
        bool want_version;       /* --version: parsing stopped there */
};

/* What an option's argument is, and how it is checked. */
enum probe_arg {
        PROBE_ARG_FLAG,     /* none: the bool field is set */
        PROBE_ARG_UINT,     /* a whole number from min to max */
        PROBE_ARG_SIZE,     /* bytes from min to max, K/M/G suffixes allowed */
        PROBE_ARG_SECONDS,  /* seconds, more than 0, from min to max */
        PROBE_ARG_IPV4,     /* an IPv4 address, not 0.0.0.0 */
        PROBE_ARG_IPV4_ANY, /* an IPv4 address; "" or 0.0.0.0 is any */
        PROBE_ARG_TEXT,     /* the text as given (const char *) */
        PROBE_ARG_CALL,     /* read() checks it and stores it */
};

/* How an option is used. */
enum {
        PROBE_OPT_CLIENT_ONLY = 1 << 0, /* the server refuses it (probe_cmdline.client_only_error) */
        PROBE_OPT_SHARED = 1 << 1,      /* its field is in struct probe_args, not the helper's own */
        PROBE_OPT_CLIENT = 1 << 2,      /* it makes this run the client; its value is remote_arg */
        PROBE_OPT_PORT = 1 << 3,        /* the port the client needs: not 0 on the client */
};

/* One option of a helper's table, in the order a table entry gives them:
 *   { "streams", 'P', PROBE_ARG_UINT, PROBE_FIELD(struct options, streams), 1, 64, PROBE_OPT_CLIENT_ONLY }
 * A table ends with an entry without a name. */
struct probe_opt {
        const char *name; /* long, without the dashes */
        int letter;       /* the short option, 0 for none */
        enum probe_arg arg;
        size_t field;      /* offsetof the value in the helper's struct (probe_args: PROBE_OPT_SHARED) */
        size_t field_size; /* sizeof it: whole numbers go to fields of 1, 2, 4 or 8 bytes */
        double min, max;
        unsigned flags;
        size_t given; /* offsetof a bool in probe_args set when the option is given; 0 none (is_server) */
        /* PROBE_ARG_CALL: checks arg and stores it in the helper's struct; a message naming the option
         * in err and a negative errno when it is wrong. */
        int (*read)(const char *arg, void *own, char *err, size_t err_size);
};

/* A member's offset and size, for an entry's field and field_size. */
#define PROBE_FIELD(type, member) offsetof(type, member), sizeof(((type *)0)->member)
/* An entry's field in struct probe_args, and its flags. */
#define PROBE_SHARED(member, more_flags)                                                                    \
        .field = offsetof(struct probe_args, member),                                                       \
        .field_size = sizeof(((struct probe_args *)0)->member), .flags = PROBE_OPT_SHARED | (more_flags)

/* The shared options, as a helper's table lists them. */
#define PROBE_OPT_SERVER                                                                                    \
        {                                                                                                   \
                .name = "server", .letter = 's', .arg = PROBE_ARG_FLAG, PROBE_SHARED(is_server, 0)          \
        }
/* --client ADDR: an IPv4 address; PROBE_OPT_CLIENT_NAME takes any text (the helper resolves it). */
#define PROBE_OPT_CLIENT_ADDR                                                                               \
        {                                                                                                   \
                .name = "client", .letter = 'c', .arg = PROBE_ARG_IPV4,                                     \
                PROBE_SHARED(remote, PROBE_OPT_CLIENT)                                                      \
        }
#define PROBE_OPT_CLIENT_NAME                                                                               \
        {                                                                                                   \
                .name = "client", .letter = 'c', .arg = PROBE_ARG_TEXT,                                     \
                PROBE_SHARED(remote_arg, PROBE_OPT_CLIENT)                                                  \
        }
/* --bind ADDR: PROBE_OPT_BIND wants an address of this node, PROBE_OPT_BIND_ANY also takes any. */
#define PROBE_OPT_BIND                                                                                      \
        {                                                                                                   \
                .name = "bind", .letter = 'B', .arg = PROBE_ARG_IPV4, PROBE_SHARED(bind, 0),                \
                .given = offsetof(struct probe_args, has_bind)                                              \
        }
#define PROBE_OPT_BIND_ANY                                                                                  \
        {                                                                                                   \
                .name = "bind", .letter = 'B', .arg = PROBE_ARG_IPV4_ANY, PROBE_SHARED(bind, 0),            \
                .given = offsetof(struct probe_args, has_bind)                                              \
        }
#define PROBE_OPT_PORT_NUMBER                                                                               \
        {                                                                                                   \
                .name = "port", .letter = 'p', .arg = PROBE_ARG_UINT, PROBE_SHARED(port, PROBE_OPT_PORT),   \
                .max = 65535, .given = offsetof(struct probe_args, has_port)                                \
        }
/* What the socket helpers (tcp, rtt, pathmtu) share. */
#define PROBE_OPTS_SOCKET PROBE_OPT_SERVER, PROBE_OPT_CLIENT_ADDR, PROBE_OPT_BIND_ANY, PROBE_OPT_PORT_NUMBER
/* --deadline SEC, more than least (0 or more) and at most a day. */
#define PROBE_OPT_DEADLINE(least)                                                                           \
        {                                                                                                   \
                .name = "deadline", .arg = PROBE_ARG_SECONDS, PROBE_SHARED(deadline, 0), .min = (least),    \
                .max = 86400                                                                                \
        }

/* One helper's command line. */
struct probe_cmdline {
        const char *prog;
        const struct probe_opt *opts; /* its options, the shared ones among them; --json, --help and
                                       * --version need no entry: every helper takes them */
        /* What the server given a PROBE_OPT_CLIENT_ONLY option is told; NULL: "--a, --b and --c are
         * for the client", naming them in the table's order. */
        const char *client_only_error;
        void (*usage)(void); /* prints --help */
        /* The helper's checks between its options, after the shared ones (NULL: none); a sentence in
         * err and a negative errno when they fail. May fill in what follows from the others. */
        int (*check)(struct probe_args *args, void *own, char *err, size_t err_size);
};

/* Reads argv by cmdline's table into args and own (both hold their defaults already). 0 when it
 * can run or args->want_help or want_version is set (parsing stops at those); -EINVAL with a
 * sentence naming the option in err otherwise. Pure, for the unit tests. */
int probe_cmdline_parse(const struct probe_cmdline *cmdline, int argc, char **argv, struct probe_args *args,
                        void *own, char *err, size_t err_size);
/* For a helper's main: probe_cmdline_parse, then --help and --version are printed and the process
 * exits 0; a wrong command line is said on stderr and 2 returned, the exit status; 0 to go on. */
int probe_cmdline_read(const struct probe_cmdline *cmdline, int argc, char **argv, struct probe_args *args,
                       void *own);
/* "PROG: MESSAGE" and a pointer to --help on stderr; returns 2, the exit code of a bad command line. */
int probe_usage_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
