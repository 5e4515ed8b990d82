/*
 * Admission to the control socket: whether one more client may connect. Root and the admin
 * group stay served whatever other users do: the last slots of max_clients are kept for them,
 * and every other uid may hold only so many connections. Pure: the server counts, this decides,
 * and says which limit was hit.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "api.h"

/* What is open when a client of uid arrives. */
struct api_admission_load {
        unsigned open;        /* every connection */
        unsigned open_of_uid; /* those of the arriving client's uid */
};

/* The slots kept for root and the admin group: reserved_admin_clients, but never more than half
 * of max_clients, so that a small max_clients still serves other users. */
unsigned api_admission_reserved(const struct api_access *access);

/* 0: admit. -EUSERS: refused; why (for the client and the log) names the limit that was hit, its
 * key and its value ("uid 1001 holds 64 connections (max_clients_per_uid 64)"). */
int api_admission_check(const struct api_access *access, uid_t uid, bool is_admin,
                        const struct api_admission_load *load, char *why, size_t size);

/* Answers a client that is not admitted with a -32003 "too many clients: WHY" error, without
 * waiting, and closes fd. */
void api_admission_refuse(int fd, const char *why);
