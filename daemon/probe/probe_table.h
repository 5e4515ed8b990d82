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
