/*
 * A keyed peer that floods a sparkd: IDS connections, each with a hello of a node id never seen
 * before (a fresh key each, the hello signed as a real node's), closed once the daemon's hello came back;
 * then one connection that asks PROBES rtt probes at once and reads the answers for WAIT_MS. Prints what
 * came back as one JSON line. Usage: peer-flood ADDRESS PORT KEY_FILE IDS PROBES WAIT_MS
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/cluster_key.h"
#include "common/node_key.h"
#include "daemon/peers/peer_tls.h"
#include "peer_client.h"

struct flood {
        SSL_CTX *ctx;
        struct sockaddr_in to;
        char buf[65536];
        size_t len;
};

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A hello of a fresh node: its own key, its id the one the key names, signed for this session. */
static int flood_hello(const unsigned char *binding, unsigned n, char *hello, size_t size)
{
        char text[256], at[2 * PEER_CONN_BINDING_LEN + 1], id[NODE_KEY_ID_LEN + 1], instance[33];
        char pub[NODE_KEY_HEX_LEN + 1], sig[NODE_SIG_HEX_LEN + 1];
        EVP_PKEY *key = node_key_generate();
        int r = -1;

        if (key && node_key_id(key, id) == 0 && node_key_public_hex(key, pub) == 0) {
                for (size_t i = 0; i < PEER_CONN_BINDING_LEN; i++)
                        snprintf(at + 2 * i, 3, "%02x", binding[i]);
                snprintf(instance, sizeof(instance), "%032x", n + 1);
                snprintf(text, sizeof(text), "sparkd-hello\ndialer\n%s\n%s\n%s\n", at, id, instance);
                if (node_key_sign(key, text, strlen(text), sig) == 0) {
                        snprintf(hello, size,
                                 "{\"type\":\"hello\",\"proto\":3,\"node_id\":\"%s\",\"instance\":\"%s\","
                                 "\"name\":\"flood-%u\",\"version\":\"0\",\"ports\":[],\"key\":\"%s\","
                                 "\"sig\":\"%s\"}\n",
                                 id, instance, n, pub, sig);
                        r = 0;
                }
        }
        EVP_PKEY_free(key);
        return r;
}

static int flood_connect(struct flood *f, unsigned n, struct peer_client *pc)
{
        char hello[1024];

        if (peer_client_connect(pc, f->ctx, &f->to, 5) < 0)
                return -1;
        if (flood_hello(pc->binding, n, hello, sizeof(hello)) < 0 ||
            peer_client_write(pc, hello, strlen(hello)) < 0) {
                peer_client_close(pc);
                return -1;
        }
        f->len = 0;
        return 0;
}

/* The next line from the daemon into out (NUL-terminated); 0 at a timeout or the end. */
static int flood_read_line(struct flood *f, struct peer_client *pc, char *out, size_t size)
{
        for (;;) {
                char *nl = memchr(f->buf, '\n', f->len);
                ssize_t n;

                if (nl) {
                        size_t k = (size_t)(nl - f->buf);

                        snprintf(out, size, "%.*s", (int)k, f->buf);
                        memmove(f->buf, nl + 1, f->len - k - 1);
                        f->len -= k + 1;
                        return 1;
                }
                if (f->len == sizeof(f->buf))
                        f->len = 0; /* a line longer than this is not one the flood looks at */
                n = peer_client_read(pc, f->buf + f->len, sizeof(f->buf) - f->len);
                if (n <= 0)
                        return 0;
                f->len += (size_t)n;
        }
}

int main(int argc, char **argv)
{
        struct cluster_key key;
        struct flood f = { 0 };
        unsigned ids, probes, hellos = 0, refused_hellos = 0, ready = 0, refused = 0;
        char line[65536], why[256], reason[512] = "";
        uint64_t wait_ms, end;
        struct peer_client pc;

        if (argc != 7) {
                fprintf(stderr, "usage: %s ADDRESS PORT KEY_FILE IDS PROBES WAIT_MS\n", argv[0]);
                return 2;
        }
        ids = (unsigned)atoi(argv[4]);
        probes = (unsigned)atoi(argv[5]);
        wait_ms = (uint64_t)atoll(argv[6]);
        f.to.sin_family = AF_INET;
        f.to.sin_port = htons((uint16_t)atoi(argv[2]));
        if (inet_pton(AF_INET, argv[1], &f.to.sin_addr) != 1 || peer_tls_init() < 0 ||
            cluster_key_load(argv[3], &key, why, sizeof(why)) < 0 || !(f.ctx = peer_tls_context_new(&key))) {
                fprintf(stderr, "peer-flood: cannot set up: %s\n", why);
                return 1;
        }
        for (unsigned i = 0; i < ids; i++) {
                if (flood_connect(&f, i, &pc) < 0) {
                        refused_hellos++;
                        continue;
                }
                /* The daemon's hello comes back once ours is taken; a refused one ends the stream. */
                if (flood_read_line(&f, &pc, line, sizeof(line)) && strstr(line, "\"hello\""))
                        hellos++;
                else
                        refused_hellos++;
                peer_client_close(&pc);
        }
        if (flood_connect(&f, ids, &pc) < 0 || !flood_read_line(&f, &pc, line, sizeof(line))) {
                fprintf(stderr, "peer-flood: the probing connection was refused\n");
                return 1;
        }
        for (unsigned i = 0; i < probes; i++) {
                char req[256];

                snprintf(req, sizeof(req),
                         "{\"type\":\"probe-request\",\"id\":\"%032x\",\"kind\":\"rtt\",\"token\":\"%032x\","
                         "\"params\":{}}\n",
                         i + 1, i + 1);
                if (peer_client_write(&pc, req, strlen(req)) < 0)
                        break;
        }
        end = now_ms() + wait_ms;
        while (now_ms() < end && flood_read_line(&f, &pc, line, sizeof(line))) {
                char *r;

                if (strstr(line, "\"probe-ready\""))
                        ready++;
                if (!strstr(line, "\"probe-refused\""))
                        continue;
                refused++;
                r = strstr(line, "\"reason\":\"");
                if (r && !reason[0])
                        snprintf(reason, sizeof(reason), "%.*s", (int)strcspn(r + 10, "\""), r + 10);
        }
        peer_client_close(&pc);
        SSL_CTX_free(f.ctx);
        printf("{\"hellos\": %u, \"hellos_refused\": %u, \"probes_ready\": %u, \"probes_refused\": %u, "
               "\"reason\": \"%s\"}\n",
               hellos, refused_hellos, ready, refused, reason);
        return 0;
}
