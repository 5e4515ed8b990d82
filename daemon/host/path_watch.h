/*
 * Waiting for a file to appear, without waking until it does: inotify on its folder, for an
 * entry of its name created or moved there (a daemon's socket made again at its start).
 */
#pragma once

#include <event2/event.h>

struct path_watch;

/* fn runs on the loop each time an entry named as path's last part appears in path's folder.
 * -errno when the folder cannot be watched (it does not exist, no inotify). */
int path_watch_new(struct event_base *base, const char *path, void (*fn)(void *userdata), void *userdata,
                   struct path_watch **ret);
void path_watch_free(struct path_watch *pw);
