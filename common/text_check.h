/*
 * Outside text checked at the door: what a peer's hello, a summary, a relayed neighbour table or
 * lldpd says is checked once, where it enters, by these functions, so that every later use of it
 * (shell, YAML, systemd, terminal, log, another node) sees a value of known shape.
 *
 * - Node names: [A-Za-z0-9._-]{1,63}; anything else is refused with the message.
 * - Netdev names: what the kernel's dev_valid_name() takes (1 to 15 bytes, no '/', ':' or
 *   whitespace, not "." or ".."), narrowed to letters, digits, '-', '_' and '.': the names go
 *   into NCCL's interface lists (',' separates, a leading '^' or '=' changes the meaning), netplan
 *   keys, systemd drop-ins ('%' is a specifier) and shells. Every fabric netdev name seen in the
 *   field (enp1s0f0np0, rocep1s0f1, bond0.100) fits; anything else is refused with the message.
 * - Addresses a peer lists for its ports: ADDRESS/PREFIX, IPv4 or IPv6; else refused.
 * - Free text (LLDP SysName, port and chassis descriptions): never refused; made valid UTF-8
 *   (each byte that is not part of a valid sequence becomes '?'), control characters (C0, DEL,
 *   C1, Unicode line separators and bidirectional overrides) dropped, tab, CR and LF made spaces,
 *   and cut at a character boundary to the bound. A long or odd value changes that field, never
 *   the table it is in.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define TEXT_NODE_NAME_MAX   63
#define TEXT_NETDEV_NAME_MAX 15 /* IFNAMSIZ - 1 */
/* An LLDP text field (SysName, chassis and port ids and descriptions) as sparkd keeps and
 * publishes it: at most this many bytes with its NUL, what every node's neighbour table takes. */
#define TEXT_LLDP_SIZE 64

/* [A-Za-z0-9._-]{1,63}. */
bool text_is_node_name(const char *s);
/* A netdev name as above. */
bool text_is_netdev_name(const char *s);
/* "ADDRESS/PREFIX" with an IPv4 (prefix 0 to 32) or IPv6 (0 to 128) address, as a port lists
 * its addresses. */
bool text_is_ip_prefix(const char *s);
/* Characters a reader takes for layout or commands rather than text: C0, DEL, C1, the Unicode
 * line and paragraph separators and the bidirectional embeddings, overrides and isolates. */
bool text_is_control(unsigned cp);
/* Whether s is what text_clean leaves: valid UTF-8, no control characters, shorter than size. */
bool text_is_clean(const char *s, size_t size);
/* Writes src (len bytes of anything, NULs included) into dst (size > 0 bytes, NUL-terminated) as
 * described above; returns the length written. */
size_t text_clean(char *dst, size_t size, const char *src, size_t len);
/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 when the bytes there (at most len)
 * are not one: an overlong form, a surrogate, past U+10FFFF, or cut short. *cp gets the code point. */
size_t text_utf8_char(const char *s, size_t len, unsigned *cp);
/* Whether the whole of s (len bytes) is valid UTF-8; *bad_at gets the offset of the first byte
 * that is not, when it is not (may be NULL). */
bool text_is_utf8(const char *s, size_t len, size_t *bad_at);
