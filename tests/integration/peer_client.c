#include "peer_client.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "daemon/peers/peer_tls.h"

void peer_client_close(struct peer_client *pc)
{
        if (pc->fd >= 0)
                close(pc->fd);
        pc->fd = -1;
        if (pc->to_send)
                evbuffer_free(pc->to_send);
        if (pc->received)
                evbuffer_free(pc->received);
        if (pc->plain)
                evbuffer_free(pc->plain);
        pc->to_send = pc->received = pc->plain = NULL;
        peer_records_clear(&pc->records);
}

int peer_client_connect(struct peer_client *pc, SSL_CTX *ctx, const struct sockaddr_in *to, int timeout_sec)
{
        struct timeval tv = { .tv_sec = timeout_sec };
        SSL *ssl = NULL;
        int r = -EPROTO;

        memset(pc, 0, sizeof(*pc));
        pc->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        pc->to_send = evbuffer_new();
        pc->received = evbuffer_new();
        pc->plain = evbuffer_new();
        if (pc->fd < 0 || !pc->to_send || !pc->received || !pc->plain) {
                peer_client_close(pc);
                return -ENOMEM;
        }
        (void)setsockopt(pc->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        (void)setsockopt(pc->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        if (connect(pc->fd, (const struct sockaddr *)to, sizeof(*to)) < 0) {
                r = -errno;
                peer_client_close(pc);
                return r;
        }
        /* A blocking TLS socket reads a record at a time: nothing after the handshake is taken. */
        ssl = SSL_new(ctx);
        if (ssl && SSL_set_fd(ssl, pc->fd) && SSL_connect(ssl) == 1 && peer_tls_agreed_version(ssl) &&
            SSL_export_keying_material(ssl, pc->binding, sizeof(pc->binding), PEER_CONN_BINDING_LABEL,
                                       strlen(PEER_CONN_BINDING_LABEL), NULL, 0, 0) == 1)
                r = peer_records_derive(&pc->records, ssl, true, peer_tls_record_cipher(ctx));
        SSL_free(ssl);
        if (r < 0)
                peer_client_close(pc);
        return r;
}

int peer_client_write(struct peer_client *pc, const void *data, size_t len)
{
        const struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
        int r = peer_records_seal(&pc->records, &iov, 1, pc->to_send);

        if (r < 0)
                return r;
        while (evbuffer_get_length(pc->to_send))
                if (evbuffer_write(pc->to_send, pc->fd) <= 0)
                        return -EIO;
        return 0;
}

size_t peer_client_pending(const struct peer_client *pc)
{
        return evbuffer_get_length(pc->plain);
}

ssize_t peer_client_read(struct peer_client *pc, void *buf, size_t size)
{
        while (!evbuffer_get_length(pc->plain)) {
                char chunk[16384];
                ssize_t n = read(pc->fd, chunk, sizeof(chunk));

                if (n <= 0)
                        return 0;
                if (evbuffer_add(pc->received, chunk, (size_t)n) < 0 ||
                    peer_records_open(&pc->records, pc->received, pc->plain) < 0)
                        return -1;
        }
        return evbuffer_remove(pc->plain, buf, size);
}
