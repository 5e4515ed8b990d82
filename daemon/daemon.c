#include "daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "config.h"
#include "daemon/base/child.h"
#include "daemon/base/event.h"
#include "daemon/base/heap_trim.h"
#include "daemon/base/notify.h"
#include "daemon/base/text_release.h"
#include "daemon/cluster/cluster_channel.h"
#include "daemon/cluster/software_section.h"
#include "fabric_wiring.h"

static const char *sparkd_socket_path(const struct sparkd *d)
{
        return d->options.socket_path ? d->options.socket_path : d->config->socket_path;
}

static const char *sparkd_state_dir(const struct sparkd *d)
{
        return d->options.state_dir ? d->options.state_dir : d->config->state_dir;
}

static struct api_access access_from_config(const struct sparkd_config *c)
{
        return (struct api_access){
                .socket_mode = c->socket_mode,
                .has_socket_gid = c->socket_group != NULL,
                .socket_gid = c->socket_gid,
                .has_admin_gid = c->admin_group != NULL,
                .admin_gid = c->admin_gid,
                .max_clients = c->max_clients,
                .reserved_admin_clients = c->reserved_admin_clients,
                .max_clients_per_uid = c->max_clients_per_uid,
        };
}

static void log_config_errors(const struct conf_errors *errors)
{
        for (size_t i = 0; i < errors->n; i++) {
                _cleanup_free_ char *line = conf_error_format(&errors->v[i]);
                struct log_field f[] = { { "config_error", line } };

                if (errors->v[i].is_warning)
                        log_warning("config: %s", line ? line : "?");
                else
                        event_emit(EVENT_CONFIG_REJECTED, f, ARRAY_SIZE(f), "config not applied: %s",
                                   line ? line : "?");
        }
}

/* Hands the config to the modules that keep host state. */
static int sparkd_apply_host_state(struct sparkd *d)
{
        int r = links_configure(d->links, d->config);

        if (r < 0)
                return r;
        r = sysctl_keeper_configure(d->sysctls, d->config);
        if (r < 0)
                return r;
        r = peers_configure(d->peers, d->config);
        if (r < 0)
                return r;
        r = firewall_check_configure(d->firewall, d->config);
        if (r < 0)
                return r;
        r = lldp_watch_configure(d->lldp, d->config->lldpd_socket);
        if (r < 0)
                return r;
        cabling_configure(d->cabling, d->config);
        /* Summaries are refreshed with the peer heartbeat: a silent node ages out with it. */
        cluster_configure(d->cluster, d->config->node_name, d->config->heartbeat_usec,
                          d->config->cluster_forget_after_usec);
        gid_watch_check(d->gid_watch);
        /* One timer for the three: an idle daemon wakes once per recheck_interval. Links change
         * with netlink events in between; sysctls and the GID tables (sysfs) tell nobody. */
        recheck_set_interval(d->recheck, d->recheck_links, d->config->recheck_usec);
        recheck_set_interval(d->recheck, d->recheck_sysctls,
                             sysctl_keeper_count(d->sysctls) ? d->config->recheck_usec : 0);
        recheck_set_interval(d->recheck, d->recheck_gids, d->config->recheck_usec);
        r = port_errors_configure(d->port_errors, d->config);
        if (r < 0)
                return r;
        collective_configure(d->collective, d->config);
        return probes_configure(d->probes, d->config);
}

/* The collective's sources: the plan and this node's environment as a torchrun job gets them. */
static json_object *collective_plan(void *userdata)
{
        struct sparkd *d = userdata;
        json_object *plan = NULL, *env = fabric_api_job_env(&d->fabric_api, "torchrun", &plan);

        json_object_put(env);
        return plan;
}

static json_object *collective_job_env(void *userdata)
{
        struct sparkd *d = userdata;
        json_object *plan = NULL, *env = fabric_api_job_env(&d->fabric_api, "torchrun", &plan);

        json_object_put(plan);
        return env;
}

/* Settings that need a new socket or a new state directory are read only at start. */
static void warn_restart_needed(const struct sparkd *d, const struct sparkd_config *next)
{
        if (!d->options.socket_path && strcmp(d->config->socket_path, next->socket_path) != 0)
                log_notice("config: [api] socket changed to %s; it takes effect at the next start",
                           next->socket_path);
        if (!d->options.state_dir && strcmp(d->config->state_dir, next->state_dir) != 0)
                log_notice("config: [daemon] state_dir changed to %s; it takes effect at the next start",
                           next->state_dir);
}

static void on_links_changed(void *userdata)
{
        struct sparkd *d = userdata;

        doctor_keep_changed(&d->doctor_keep);
        gid_watch_poke(d->gid_watch);
        port_errors_poke(d->port_errors);
        /* lldpd drops a moved port's neighbour only when it sees the interface go. */
        lldp_watch_refresh(d->lldp);
        cabling_update(d->cabling);
        peers_fabric_changed(d->peers);
}

static void on_lldp_changed(void *userdata)
{
        struct sparkd *d = userdata;
        const struct lldp_table *t = lldp_watch_table(d->lldp);

        peers_set_chassis(d->peers, t->has_chassis ? t->chassis_id : NULL, t->chassis_name);
        cabling_update(d->cabling);
}

static void recheck_links(void *links)
{
        links_recheck(links);
}

static void recheck_sysctls(void *sysctls)
{
        (void)sysctl_keeper_check(sysctls);
}

static void recheck_gids(void *gid_watch)
{
        gid_watch_check(gid_watch);
}

static int sparkd_wire_recheck(struct sparkd *d)
{
        int r = recheck_new(d->base, &d->recheck);

        if (r >= 0)
                r = recheck_add(d->recheck, recheck_links, d->links, &d->recheck_links);
        if (r >= 0)
                r = recheck_add(d->recheck, recheck_sysctls, d->sysctls, &d->recheck_sysctls);
        if (r >= 0)
                r = recheck_add(d->recheck, recheck_gids, d->gid_watch, &d->recheck_gids);
        return r;
}

/* Re-reads the config. On errors the running config stays and errors says why. */
static int sparkd_reload(struct sparkd *d, struct conf_errors *errors)
{
        struct sparkd_config *next = NULL;
        struct api_access access;
        int r;

        notify_reloading();
        r = conf_load(d->options.config_path, d->options.config_path_explicit, &next, errors);
        log_config_errors(errors);
        if (r < 0) {
                notify_ready("config reload refused; running with the previous config");
                return r;
        }
        warn_restart_needed(d, next);
        access = access_from_config(next);
        r = api_server_set_access(d->api, &access);
        if (r < 0)
                log_warning("config: cannot apply socket mode or group to %s: %s", api_server_path(d->api),
                            strerror(-r));
        log_set_max_level(next->log_level);
        conf_free(d->config);
        d->config = next;
        d->fabric_sources.config = next;
        d->reloads++;
        /* The host root may have changed, and a reload is when an upgrade is expected to show. */
        software_section_publish(d->cluster, d->config->host_root);
        r = sparkd_apply_host_state(d);
        if (r < 0)
                log_error("config: applying the new host state settings failed: %s", strerror(-r));
        {
                struct log_field f[] = { { "config", d->config->path } };

                event_emit(EVENT_CONFIG_RELOADED, f, ARRAY_SIZE(f), "config reloaded from %s%s",
                           d->config->path, d->config->path_found ? "" : " (not found: built-in defaults)");
        }
        notify_ready("running");
        r = metrics_writer_configure(d->metrics, d->config);
        if (r < 0)
                log_warning("metrics: cannot take the new config: %s", strerror(-r));
        r = launcher_files_configure(d->launcher_files, d->config);
        if (r < 0)
                log_warning("export: cannot take the new config: %s", strerror(-r));
        return 0;
}

static void on_signal(evutil_socket_t sig, short what, void *userdata)
{
        struct sparkd *d = userdata;

        if (sig == SIGCHLD) {
                child_reap_all();
                return;
        }
        if (sig == SIGHUP) {
                struct conf_errors errors;

                (void)sparkd_reload(d, &errors);
                conf_errors_clear(&errors);
                return;
        }
        event_emit(EVENT_DAEMON_STOPPING, NULL, 0, "stopping on %s", strsignal((int)sig));
        notify_stopping();
        event_base_loopbreak(d->base);
}

static void on_event_for_subscribers(json_object *event, void *userdata)
{
        struct sparkd *d = userdata;

        if (d->api)
                api_server_publish(d->api, event);
        /* Whatever the daemon reports may change what its summary and its doctor say. */
        doctor_keep_changed(&d->doctor_keep);
        cluster_feed_poke(d->cluster_feed);
}

static int sparkd_open_state(struct sparkd *d)
{
        int r = store_open(sparkd_state_dir(d), &d->store);

        /* The daemon still serves without its state directory; what it would keep is then lost
         * at exit, and it says so. */
        if (r < 0)
                log_error("state directory %s is unusable: %s; running without saved state",
                          sparkd_state_dir(d), strerror(-r));
        return node_id_load(d->store, d->node_id, &d->node_key);
}

static void freshen_cluster_sections(void *feed)
{
        cluster_feed_freshen(feed);
}

static int sparkd_start_cluster_feed(struct sparkd *d)
{
        struct cluster_feed_sources sources = {
                .cluster = d->cluster,
                .links = d->links,
                .peers = d->peers,
                .probes = d->probes,
                .fabric = &d->fabric_api,
                .config = &d->config,
                .node_id = d->node_id,
                .started_wall = d->started_wall,
        };

        int r = cluster_feed_new(d->base, &sources, &d->cluster_feed);

        if (r < 0)
                return r;
        d->fabric_api.name_is_shared = cluster_feed_name_is_shared;
        d->fabric_api.name_clashes = cluster_feed_name_clashes;
        d->fabric_api.name_is_shared_userdata = d->fabric_api.name_clashes_userdata = d->cluster_feed;
        r = cluster_doctor_new(d->base, d->peers, &d->fabric_api, &d->cluster_doctor);
        if (r < 0)
                return r;
        d->cluster_api = (struct cluster_api_context){
                .cluster = d->cluster,
                .doctor = d->cluster_doctor,
                .fabric = &d->fabric_api,
                .freshen = freshen_cluster_sections,
                .freshen_userdata = d->cluster_feed,
        };
        return 0;
}

static int sparkd_start_metrics(struct sparkd *d)
{
        struct metrics_sources sources = {
                .links = d->links,
                .peers = d->peers,
                .probes = d->probes,
                .fabric = &d->fabric_api,
                .gid_watch = d->gid_watch,
                .counter_watch = port_errors_watch(d->port_errors),
                .started = d->started_monotonic,
        };

        return metrics_writer_new(d->base, &sources, d->config, &d->metrics);
}

static void on_cluster_for_launcher_files(void *userdata)
{
        launcher_files_plan_changed(userdata);
}

/* The plan is the cluster view's: the launchers' files follow its changes. */
static int sparkd_start_launcher_files(struct sparkd *d)
{
        int r = launcher_files_new(d->base, &d->fabric_api, d->config, &d->launcher_files);

        return r < 0 ? r : cluster_watch(d->cluster, on_cluster_for_launcher_files, d->launcher_files);
}

static int reload_config(void *daemon, struct conf_errors *errors)
{
        return sparkd_reload(daemon, errors);
}

static void sparkd_wire_control(struct sparkd *d)
{
        d->control = (struct control_context){
                .api = d->api,
                .config = &d->config,
                .reloads = &d->reloads,
                .node_id = d->node_id,
                .started_monotonic = d->started_monotonic,
                .started_wall = d->started_wall,
                .state_dir = d->options.state_dir,
                .store = d->store,
                .gid_watch = d->gid_watch,
                .links = d->links,
                .sysctls = d->sysctls,
                .peers = d->peers,
                .metrics = d->metrics,
                .fabric = &d->fabric_api,
                .health = &d->health,
                .counter_watch = port_errors_watch(d->port_errors),
                .reload = reload_config,
                .reload_userdata = d,
        };
}

int sparkd_new(const struct sparkd_options *options, struct sparkd_config *config, int listen_fd,
               struct sparkd **ret)
{
        static const int signals[] = { SIGTERM, SIGINT, SIGHUP, SIGCHLD };
        struct sparkd *d = calloc(1, sizeof(*d));
        struct api_access access;
        int r;

        if (!d)
                return -ENOMEM;
        d->options = *options;
        d->config = config;
        clock_gettime(CLOCK_MONOTONIC, &d->started_monotonic);
        d->started_wall = time(NULL);
        log_set_max_level(config->log_level);

        d->base = event_base_new();
        if (!d->base || heap_trim_setup(d->base, HEAP_TRIM_DELAY_USEC) < 0 ||
            text_release_setup(d->base) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        r = sparkd_open_state(d);
        if (r < 0) {
                log_error("cannot make a node id: %s", strerror(-r));
                goto fail;
        }

        access = access_from_config(config);
        r = api_server_new(d->base, sparkd_socket_path(d), listen_fd, &access, &d->api);
        if (r == -EADDRINUSE) {
                log_error("another sparkd is already serving %s", sparkd_socket_path(d));
                goto fail;
        }
        if (r == -ENOTSOCK) {
                log_error("%s exists and is not a socket: sparkd replaces only a socket an earlier "
                          "sparkd left; remove it or give another --socket",
                          sparkd_socket_path(d));
                goto fail;
        }
        if (r < 0) {
                log_error("cannot listen on %s: %s", sparkd_socket_path(d), strerror(-r));
                goto fail;
        }
        r = links_new(d->base, d->store, &d->links);
        if (r < 0) {
                log_error("cannot watch network links: %s", strerror(-r));
                goto fail;
        }
        r = sysctl_keeper_new(d->base, "/proc/sys", &d->sysctls);
        if (r < 0)
                goto fail;
        r = peers_new(d->base, d->links, d->node_id, sparkd_state_dir(d), &d->peers);
        if (r < 0)
                goto fail;
        peers_set_node_key(d->peers, d->node_key);
        r = probes_new(d->base, d->peers, d->store, d->node_id, &d->probes);
        if (r < 0)
                goto fail;
        r = collective_new(d->base, d->peers, probes_history(d->probes), d->node_id, &d->collective);
        if (r < 0)
                goto fail;
        collective_set_sources(d->collective,
                               &(struct collective_sources){ .plan = collective_plan,
                                                             .job_env = collective_job_env,
                                                             .userdata = d,
                                                             .facts = fabric_sources_gather,
                                                             .facts_userdata = &d->fabric_sources });
        r = firewall_check_new(d->base, d->peers, d->links, &d->firewall);
        if (r < 0)
                goto fail;
        r = cluster_channel_new(d->base, d->peers, d->node_id, config->node_name, &d->cluster);
        if (r < 0)
                goto fail;
        cluster_set_node_key(d->cluster, d->node_key);
        r = lldp_watch_new(d->base, &d->lldp);
        if (r < 0)
                goto fail;
        lldp_watch_set_change_hook(d->lldp, on_lldp_changed, d);
        r = cabling_new(d->base,
                        &(struct cabling_sources){ .links = d->links,
                                                   .lldp = d->lldp,
                                                   .peers = d->peers,
                                                   .cluster = d->cluster,
                                                   .node_id = d->node_id },
                        &d->cabling);
        if (r < 0)
                goto fail;
        r = aer_watch_new(&d->aer_watch);
        if (r < 0)
                goto fail;
        r = port_errors_new(d->base, d->links, &d->port_errors);
        if (r < 0)
                goto fail;
        probes_set_counter_watch(d->probes, port_errors_watch(d->port_errors));
        d->fabric_sources = (struct fabric_sources){
                .config = d->config,
                .links = d->links,
                .sysctls = d->sysctls,
                .aer_watch = d->aer_watch,
                .counter_watch = port_errors_watch(d->port_errors),
        };
        r = gid_watch_new(d->base, fabric_sources_gid_table, &d->fabric_sources, &d->gid_watch);
        if (r < 0)
                goto fail;
        links_set_change_hook(d->links, on_links_changed, d);
        r = sparkd_wire_recheck(d);
        if (r < 0)
                goto fail;
        sparkd_wire_fabric_facts(d);
        r = sparkd_start_cluster_feed(d);
        if (r < 0)
                goto fail;
        r = sparkd_start_metrics(d);
        if (r < 0)
                goto fail;
        r = sparkd_start_launcher_files(d);
        if (r < 0)
                goto fail;
        sparkd_wire_control(d);
        r = control_register(&d->control);
        if (r >= 0)
                r = fabric_api_register(d->api, &d->fabric_api);
        if (r >= 0)
                r = probes_register(d->probes, d->api);
        if (r >= 0)
                r = collective_register(d->collective, d->api);
        if (r >= 0)
                r = cluster_api_register(d->api, &d->cluster_api);
        if (r >= 0)
                r = cabling_register(d->cabling, d->api);
        if (r < 0)
                goto fail;
        event_set_sink(on_event_for_subscribers, d);

        for (size_t i = 0; i < ARRAY_SIZE(signals); i++) {
                d->signal_events[i] = evsignal_new(d->base, signals[i], on_signal, d);
                if (!d->signal_events[i] || evsignal_add(d->signal_events[i], NULL) < 0) {
                        r = -ENOMEM;
                        goto fail;
                }
        }
        /* A client that vanishes mid-reply must cost a failed write, not the daemon. */
        signal(SIGPIPE, SIG_IGN);
        r = notify_watchdog_start(d->base, &d->watchdog);
        if (r < 0)
                log_warning("watchdog requested but cannot be started: %s", strerror(-r));
        *ret = d;
        return 0;

fail:
        sparkd_free(d);
        return r;
}

int sparkd_run(struct sparkd *d)
{
        int r = sparkd_apply_host_state(d);

        if (r < 0) {
                log_error("cannot apply the host state settings: %s", strerror(-r));
                return r;
        }
        struct log_field f[] = { { "node", d->config->node_name }, { "socket", api_server_path(d->api) } };
        char status[512];

        event_emit(EVENT_DAEMON_STARTED, f, ARRAY_SIZE(f), "sparkd %s serving node %s on %s%s",
                   SPARKD_VERSION, d->config->node_name, api_server_path(d->api),
                   api_server_is_activated(d->api) ? " (socket from systemd)" : "");
        snprintf(status, sizeof(status), "serving on %s", api_server_path(d->api));
        notify_ready(status);
        if (event_base_dispatch(d->base) < 0)
                return -EIO;
        return 0;
}

void sparkd_free(struct sparkd *d)
{
        if (!d)
                return;
        event_set_sink(NULL, NULL);
        /* Before the modules whose checks it runs. */
        recheck_free(d->recheck);
        metrics_writer_free(d->metrics);
        launcher_files_free(d->launcher_files);
        cluster_doctor_free(d->cluster_doctor);
        cluster_feed_free(d->cluster_feed);
        health_kept_clear(&d->health);
        control_clear(&d->control);
        doctor_keep_clear(&d->doctor_keep);
        cluster_channel_free(d->peers, d->cluster);
        /* After the cluster, which calls it on changes; before the peers and links it reads. */
        cabling_free(d->cabling);
        lldp_watch_free(d->lldp);
        collective_free(d->collective);
        probes_free(d->probes);
        firewall_check_free(d->firewall);
        aer_watch_free(d->aer_watch);
        port_errors_free(d->port_errors);
        gid_watch_free(d->gid_watch);
        peers_free(d->peers);
        links_free(d->links);
        sysctl_keeper_free(d->sysctls);
        api_server_free(d->api);
        for (size_t i = 0; i < ARRAY_SIZE(d->signal_events); i++)
                if (d->signal_events[i])
                        event_free(d->signal_events[i]);
        if (d->watchdog)
                event_free(d->watchdog);
        store_close(d->store);
        EVP_PKEY_free(d->node_key);
        conf_free(d->config);
        text_release_teardown();
        heap_trim_teardown();
        if (d->base) {
                /* A connection's buffer freed while a callback of it was still queued is released
                 * by that callback, which only the loop runs: run what is queued, then free. */
                for (int i = 0; i < 4; i++)
                        (void)event_base_loop(d->base, EVLOOP_NONBLOCK);
                event_base_free(d->base);
        }
        free(d);
}
