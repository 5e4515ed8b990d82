#include "metrics_writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "config.h"
#include "daemon/base/log.h"
#include "daemon/base/store.h"
#include "metrics.h"

#define WRITE_EVERY_SEC 15

struct metrics_writer {
        struct metrics_sources sources;
        struct event *timer;
        char *node;
        char *textfile; /* NULL: not written */
};

static double uptime_sec(const struct timespec *started)
{
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (double)(now.tv_sec - started->tv_sec) + (double)(now.tv_nsec - started->tv_nsec) / 1e9;
}

char *metrics_writer_text(struct metrics_writer *w)
{
        struct link_states links = { 0 };
        struct metrics_node_state state = {
                .gid_changes = gid_watch_changes(w->sources.gid_watch),
                .env_stale = gid_watch_env_stale(w->sources.gid_watch),
        };
        json_object *peers, *latest;
        char *text;

        if (links_states(w->sources.links, &links) < 0)
                return NULL;
        /* The doctor's kept result: a scrape does not run it. Without it the other metrics still
         * go out; its checks are left out. */
        state.doctor = fabric_api_doctor_kept(w->sources.fabric);
        state.doctor_runs = w->sources.fabric->keep ? doctor_keep_runs(w->sources.fabric->keep) : 0;
        peers = peers_to_json(w->sources.peers);
        latest = history_latest(probes_history(w->sources.probes));
        text = metrics_render(w->node, SPARKD_VERSION, uptime_sec(&w->sources.started), &links,
                              w->sources.counter_watch ? counter_watch_last(w->sources.counter_watch) : NULL,
                              peers, latest, &state);
        free(links.v);
        json_object_put(peers);
        json_object_put(latest);
        json_object_put(state.doctor);
        return text;
}

static void write_textfile(struct metrics_writer *w)
{
        _cleanup_free_ char *text = NULL;
        int r;

        if (!w->textfile)
                return;
        text = metrics_writer_text(w);
        /* node_exporter may run as another user: the file is world-readable. */
        r = text ? store_write_path(w->textfile, text, strlen(text), 0644) : -ENOMEM;
        if (r < 0)
                log_warning("cannot write metrics to %s: %s", w->textfile, strerror(-r));
}

static void on_timer(evutil_socket_t fd, short what, void *userdata)
{
        write_textfile(userdata);
}

static int take_config(struct metrics_writer *w, const struct sparkd_config *config)
{
        char *node = strdup(config->node_name),
             *textfile = config->metrics_textfile ? strdup(config->metrics_textfile) : NULL;

        if (!node || (config->metrics_textfile && !textfile)) {
                free(node);
                free(textfile);
                return -ENOMEM;
        }
        free(w->node);
        free(w->textfile);
        w->node = node;
        w->textfile = textfile;
        return 0;
}

int metrics_writer_new(struct event_base *base, const struct metrics_sources *sources,
                       const struct sparkd_config *config, struct metrics_writer **ret)
{
        struct metrics_writer *w = calloc(1, sizeof(*w));
        struct timeval every = { .tv_sec = WRITE_EVERY_SEC };

        if (!w)
                return -ENOMEM;
        w->sources = *sources;
        w->timer = event_new(base, -1, EV_PERSIST, on_timer, w);
        if (!w->timer || take_config(w, config) < 0 || (w->textfile && event_add(w->timer, &every) < 0)) {
                metrics_writer_free(w);
                return -ENOMEM;
        }
        *ret = w;
        return 0;
}

void metrics_writer_free(struct metrics_writer *w)
{
        if (!w)
                return;
        if (w->timer)
                event_free(w->timer);
        free(w->node);
        free(w->textfile);
        free(w);
}

int metrics_writer_configure(struct metrics_writer *w, const struct sparkd_config *config)
{
        struct timeval every = { .tv_sec = WRITE_EVERY_SEC };
        int r = take_config(w, config);

        if (r < 0)
                return r;
        /* Without a textfile there is nothing to write: no timer wakes the daemon for it. */
        event_del(w->timer);
        if (w->textfile && event_add(w->timer, &every) < 0)
                return -ENOMEM;
        write_textfile(w);
        return 0;
}
