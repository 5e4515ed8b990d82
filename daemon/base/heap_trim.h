/*
 * Giving freed heap pages back to the kernel off the path of every request. glibc keeps the
 * pages freed between live chunks resident until malloc_trim, and a trim walks the whole heap:
 * milliseconds on a heap that a cluster's summaries and a full history have fragmented, paid by
 * whatever reply or probe asked for it. A module that has just freed much (a large reply sent,
 * a burst of probes over, a history file parsed) asks for a trim; it runs on the loop
 * HEAP_TRIM_DELAY_USEC later, once for all the asks in between. The heap is the process's, so
 * this is one per process: set up with the loop, asked from anywhere; before it is set up (tools,
 * unit tests without a loop) an ask trims at once.
 */
#pragma once

#include <event2/event.h>
#define HEAP_TRIM_DELAY_USEC 2000000

#include <stdint.h>

/* delay_usec: HEAP_TRIM_DELAY_USEC in the daemon. */
int heap_trim_setup(struct event_base *base, uint64_t delay_usec);
void heap_trim_teardown(void);
void heap_trim_soon(void);
/* Trims at once, for a module that has just freed a large transient it makes every few seconds:
 * a trim HEAP_TRIM_DELAY_USEC later would come as it makes the next, and its pages would stay
 * resident most of the time. */
void heap_trim_now(void);
/* How many trims ran (tests). */
unsigned long heap_trim_count(void);
