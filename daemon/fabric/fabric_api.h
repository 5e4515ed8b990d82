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
        /* For the job methods: this node's id, and every node of the cluster view with its
         * sections: [{node_id, name, self, stale, age_s, doctor, addresses}] (a new reference;
         * cluster_nodes NULL: no view is known, the plan is this node alone). */
        const char *node_id;
        json_object *(*cluster_nodes)(void *userdata);
        void *cluster_nodes_userdata;
        /* Whether more than one node id carries name in the cluster table (no head by that name),
         * and those names ([{name, node_ids}], a new reference, NULL: not known) for the doctor,
         * which gets each marked with whether [cluster] head is it. */
        bool (*name_is_shared)(const char *name, void *userdata);
        void *name_is_shared_userdata;
        json_object *(*name_clashes)(void *userdata);
        void *name_clashes_userdata;
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
 * could not be read. For the status's health line and the metrics. */
json_object *fabric_api_doctor_kept(const struct fabric_api_context *context);
/* The doctor run now as fabric_api_doctor (kept too), and this node's addresses section
 * (job_api.h) from the same facts. */
int fabric_api_node_sections(const struct fabric_api_context *context, json_object **doctor,
                             json_object **addresses);

/* What the launchers' files are made of, from facts read now: the plan (job-nodes's answer),
 * this node's env --for torchrun (env's answer) and the cabling map (NULL when not known), as
 * sparkc export asks for them. */
int fabric_api_job_files_input(const struct fabric_api_context *context, json_object **plan,
                               json_object **env, json_object **map);

/* This node's environment as `env --for FRAMEWORK` gives it, with unified_memory (whether the GPU
 * shares the node's memory, for a probe's memory guard) added (a new reference, NULL when the facts
 * cannot be read), and the job plan it was made with (*plan, a new reference or NULL). */
json_object *fabric_api_job_env(const struct fabric_api_context *context, const char *framework,
                                json_object **plan);
int fabric_api_register(struct api_server *api, struct fabric_api_context *context);
