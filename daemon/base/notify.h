/* Talking to systemd's service manager: readiness, reload and stop notifications, and the
 * watchdog keep-alive. Each call does nothing when the daemon was not started by systemd. */
#pragma once

#include <event2/event.h>

void notify_ready(const char *status);
void notify_reloading(void);
void notify_stopping(void);
/* Starts the keep-alive timer at half the watchdog period when systemd asked for one. */
int notify_watchdog_start(struct event_base *base, struct event **ret);
