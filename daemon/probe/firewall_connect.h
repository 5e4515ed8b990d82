/*
 * The connecting end of the firewall check: one non-blocking TCP connect from an address of a
 * fabric netdev (bound to it, and to the netdev where the kernel allows) to a peer's port, on
 * the loop, with a timeout. Its outcome: open, refused (a reset or an ICMP error: what the kernel
 * said is kept) or dropped (no answer before the timeout).
 */
#pragma once

#include <event2/event.h>
#include <net/if.h>
#include <stdint.h>

#define FIREWALL_CONNECT_SEC 3

struct fw_attempt;
typedef void (*fw_attempt_fn)(struct fw_attempt *a, void *userdata);

struct fw_attempt {
        char iface[IF_NAMESIZE];
        char local[64];  /* this node's address, without prefix */
        char remote[64]; /* the peer's */
        uint16_t port;
        const char *outcome; /* "open", "refused", "dropped"; NULL while it runs */
        char detail[96];     /* what the kernel said, when refused */
        int fd;
        struct event *ev;
        fw_attempt_fn done;
        void *userdata;
};

/* Starts a (filled with iface, local, remote and port); done runs once, from the loop, with the
 * outcome set. Errors before any packet left (socket, bind) end it at once as refused with the
 * reason; -ENOMEM is returned. */
int fw_attempt_start(struct event_base *base, struct fw_attempt *a, fw_attempt_fn done, void *userdata);
/* Stops a running attempt without calling done. */
void fw_attempt_stop(struct fw_attempt *a);
