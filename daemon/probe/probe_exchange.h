/*
 * Running one probe with a peer over the authenticated peer channel: the initiator sends
 * probe-request, the responder starts its server helper and answers probe-ready (or
 * probe-refused), the initiator runs the client helper, judges its result and sends probe-done.
 * Deadlines on both sides, and the peer going away, end a probe. Whatever ends a probe is told
 * to the layer above through ps->on_probe_ended, which may start a queued one.
 */
#pragma once

#include <json-c/json.h>

#include "probe_internal.h"

/* Takes the peers' probe messages; on_ended is told each time a probe has ended. */
void probe_exchange_attach(struct probes *ps, void (*on_ended)(struct probes *ps));
void probe_exchange_detach(struct probes *ps);
/* Starts initiator p: prepares this node, asks the peer. Ends p on failure. */
void probe_run(struct probe *p);
/* Starts responder p, which waited for a place: prepares this node, starts the server helper.
 * Refuses and ends p on failure. */
void probe_answer(struct probe *p);
/* Judges and records the result (or error), tells the peer and the caller, frees p. */
void probe_finish(struct probe *p, const char *error);
