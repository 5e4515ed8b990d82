/*
 * The bytes a peer's connection brings after the handshake (daemon/peers/peer_record.h), with the
 * session's keys fixed here so that records the input asks for are sealed as the peer's end
 * would seal them. The input is a list of steps, each a byte that says what and a length byte:
 *   even: the next LENGTH input bytes are sealed as one record (or several, past 16 KiB) and sent;
 *   odd:  the next LENGTH input bytes are sent as they are (a header, garbage, half a record).
 * What is sent comes to the receiving end in pieces of the sizes the step bytes give, and is
 * opened as it comes. While only sealed bytes were sent what opens must be exactly what was
 * sealed, in order; once an open fails, the connection is over, as peer_conn.c ends it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/peers/peer_record.h"
#include "fuzz.h"

static EVP_CIPHER_CTX *cipher;

static void keys(struct peer_records *r, bool is_client)
{
        memset(r, 0, sizeof(*r));
        memset(is_client ? r->send.key : r->receive.key, 0x11, 16);
        memset(is_client ? r->send.iv : r->receive.iv, 0x22, 12);
        memset(is_client ? r->receive.key : r->send.key, 0x33, 16);
        memset(is_client ? r->receive.iv : r->send.iv, 0x44, 12);
        r->cipher = cipher;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct peer_records peer, self;
        struct evbuffer *wire = evbuffer_new(), *in = evbuffer_new(), *plain = evbuffer_new(),
                        *expected = evbuffer_new();
        bool is_clean = true, is_over = false;

        if (!cipher)
                cipher = peer_records_cipher_new();
        if (!cipher || !wire || !in || !plain || !expected)
                abort();
        keys(&peer, true);
        keys(&self, false);
        for (size_t i = 0; i + 2 <= size && !is_over;) {
                uint8_t what = data[i], len = data[i + 1];
                size_t n = len <= size - i - 2 ? len : size - i - 2;
                const uint8_t *bytes = data + i + 2;
                size_t piece = (size_t)(what >> 1) + 1;

                i += 2 + n;
                if (what & 1) {
                        evbuffer_add(wire, bytes, n);
                        is_clean = false;
                } else {
                        /* Repeated, for a stream of many records. */
                        size_t times = what >= 0xf0 ? 200 : 1;

                        for (size_t k = 0; k < times; k++) {
                                struct iovec iov = { .iov_base = (void *)bytes, .iov_len = n };

                                if (peer_records_seal(&peer, &iov, 1, wire) < 0)
                                        abort();
                                evbuffer_add(expected, bytes, n);
                        }
                }
                while (evbuffer_get_length(wire) && !is_over) {
                        size_t k = evbuffer_get_length(wire) < piece ? evbuffer_get_length(wire) : piece;
                        int r;

                        evbuffer_remove_buffer(wire, in, k);
                        r = peer_records_open(&self, in, plain);
                        if (r < 0) {
                                if (is_clean)
                                        abort(); /* what the peer sealed did not open */
                                if (r != -EBADMSG && r != -EMSGSIZE)
                                        abort();
                                is_over = true;
                        }
                }
        }
        if (is_clean) {
                size_t n = evbuffer_get_length(plain);

                if (n != evbuffer_get_length(expected) ||
                    (n && memcmp(evbuffer_pullup(plain, -1), evbuffer_pullup(expected, -1), n) != 0))
                        abort();
        }
        evbuffer_free(wire);
        evbuffer_free(in);
        evbuffer_free(plain);
        evbuffer_free(expected);
        return 0;
}
