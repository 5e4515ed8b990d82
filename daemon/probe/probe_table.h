/*
 * The probes this node takes part in, as the initiator or the responder: a new entry, finding
 * one by id, telling its waiting caller what it does, and freeing it (its helper killed, a caller
 * still waiting answered).
 */
#pragma once

#include <stdbool.h>

#include "probe_internal.h"

/* A zeroed probe of ps, in its list; NULL when out of memory. */
struct probe *probe_new(struct probes *ps);
struct probe *probe_find(struct probes *ps, const char *id, bool initiator);
/* Tells the waiting caller (if any) what the probe is doing. */
void probe_notify(struct probe *p, const char *phase, const char *message);
/* Frees p, killing its helper and releasing the bandwidth slot; starting a queued probe in that
 * slot is the caller's business. */
void probe_free(struct probe *p);
/* Probes running (not waiting) but except (NULL: none): all of them when peer_id is NULL, else
 * those this node answers for that peer. */
unsigned probe_count_running(const struct probes *ps, const char *peer_id, const struct probe *except);
/* Probes waiting for a place but except: all of them when peer_id is NULL, else those that peer
 * asked for. */
unsigned probe_count_waiting(const struct probes *ps, const char *peer_id, const struct probe *except);
/* Whether p, waiting, may start now without passing PROBE_RUNNING_MAX or, answering a peer,
 * PROBE_RUNNING_PER_PEER. */
bool probe_has_place(const struct probe *p);
