/*
 * Freeing, after each turn of the loop, the copies that the turn unpacked of packed texts
 * (common/json_raw.h): a text read in a callback is valid until that callback returns, and the
 * texts held stay packed between reads. One per process, as the heap is: set up with the loop;
 * without it (tools, unit tests) the copies stay with their values until those are freed.
 */
#pragma once

#include <event2/event.h>

int text_release_setup(struct event_base *base);
void text_release_teardown(void);
