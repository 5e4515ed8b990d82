/*
 * The API methods about the fabric: fabric (the inventory), env (the NCCL environment, and with
 * "for" a framework's), doctor (the checks), job-nodes (the nodes a job starts on) and env-check
 * (a job's environment judged), registered with what they read.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "daemon/base/api.h"
#include "daemon/host/gid_watch.h"
#include "doctor_keep.h"
#include "fabric_gather.h"

/* What the fabric methods read; it must outlive the API server. */
struct fabric_api_context {
        struct fabric_sources *sources;
        struct gid_watch *gid_watch;
        /* What the layers above the fabric know, for the doctor and the fabric method: the peers
         * method's result and the rails' verdicts (new references; NULL: not known). */
        json_object *(*peers)(void *userdata);
        void *peers_userdata;
        json_object *(*rail_verdicts)(void *userdata);
        void *rail_verdicts_userdata;
        /* The up nodes' software sections and the firewall checks with peers (fabric_facts'
         * software_nodes and firewall; new references, NULL: not known). */
        json_object *(*software_nodes)(void *userdata);
        void *software_nodes_userdata;
        json_object *(*firewall)(void *userdata);
        void *firewall_userdata;
        /* lldpd as the LLDP watch sees it: "running", "absent" or "error: TEXT" (a new string;
         * NULL: not known). */
        char *(*lldpd_status)(void *userdata);
        void *lldpd_status_userdata;
        /* The cluster's topology map (topology.h; a new reference, NULL: not known), for the
         * doctor's topology check and env by shape. */
        json_object *(*topology)(void *userdata);
        void *topology_userdata;
        /* For the job methods: this node's id, and the doctor section another node published
         * (a reference the caller puts; NULL when not known, the node then counts as not
         * failing) with whether it is stale. node_doctor NULL: no node's doctor is known but this
         * node's. */
        const char *node_id;
        json_object *(*node_doctor)(const char *node_id, bool *is_stale, void *userdata);
        void *node_doctor_userdata;
        /* The doctor's result kept for the readers that may be a little behind (NULL: each
         * reads it afresh). */
        struct doctor_keep *keep;
};

/* The doctor's result from facts read now, as the doctor method gives it; it becomes the kept
 * one too. */
int fabric_api_doctor(const struct fabric_api_context *context, json_object **out);
/* The doctor run now and nothing kept: the keep's runner (context: the fabric_api_context). */
int fabric_api_doctor_run(void *context, json_object **out);
/* The kept result (doctor_keep.h), made first when due: a new reference, NULL when the facts
 * could not be read. For the status's health line, the metrics and the cluster sections. */
json_object *fabric_api_doctor_kept(const struct fabric_api_context *context);

int fabric_api_register(struct api_server *api, struct fabric_api_context *context);
