/*
 * The probe schedule: bandwidth probes in pairs by the circle method (rounds.h), one round per
 * interval, and RTT and path MTU probes between all pairs, started through the queue like any
 * other probe by a timer set to when the next of them may be due (none with both off, and none
 * while no peer is up: a peer that comes up looks again).
 */
#pragma once

#include "probe_internal.h"

int probe_schedule_new(struct probes *ps);
/* (Re)starts the tick, after the config changed or a peer came up. */
void probe_schedule_start(struct probes *ps);
void probe_schedule_free(struct probes *ps);
