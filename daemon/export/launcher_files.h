/*
 * The launchers' files kept current with the job plan ([export] directory): sparkrun's cluster
 * file (NAME.yaml, [export] sparkrun_name) and spark-vllm-docker's .env (svd.env), rendered by
 * common/launcher_export.c exactly as sparkc export writes them. They are made again a second
 * after the cluster view changed (a node came, went stale, changed its doctor or addresses), on
 * reload and every 30 s; a file is written (atomically, mode 0644) only when its bytes differ, so
 * it stays untouched, mtime and all, while the plan does. A format that cannot hold the plan (a
 * ring of four for sparkrun, this node no member) has its file removed, never left stale, and
 * the reason logged once.
 */
#pragma once

#include <event2/event.h>

#include "daemon/config/conf.h"
#include "daemon/fabric/fabric_api.h"

struct launcher_files;

int launcher_files_new(struct event_base *base, struct fabric_api_context *fabric,
                       const struct sparkd_config *config, struct launcher_files **ret);
void launcher_files_free(struct launcher_files *w);
/* Takes [export] from a new config and writes the files now. */
int launcher_files_configure(struct launcher_files *w, const struct sparkd_config *config);
/* The plan may have changed: the files are made again a second from now (once for a burst). */
void launcher_files_plan_changed(struct launcher_files *w);
