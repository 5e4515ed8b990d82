/*
 * sparkc's commands, each run with the global options and its own argv (argv[0] the command's
 * name); each returns the exit status.
 */
#pragma once

#include "client.h"
#include "global_options.h"

/* The options of the commands that have their own. */
extern const struct command_options env_options, doctor_options, probe_options, history_options,
        keygen_options, topology_options, hostfile_options, cluster_options, export_options;

/* status_cmd.c */
int cmd_status(const struct client_options *o, int argc, char **argv);
int cmd_version(const struct client_options *o, int argc, char **argv);
int cmd_reload(const struct client_options *o, int argc, char **argv);
int cmd_metrics(const struct client_options *o, int argc, char **argv);
/* links_cmd.c, peers_cmd.c, neighbours_cmd.c */
int cmd_links(const struct client_options *o, int argc, char **argv);
int cmd_peers(const struct client_options *o, int argc, char **argv);
int cmd_neighbours(const struct client_options *o, int argc, char **argv);
/* fabric_cmd.c */
int cmd_fabric(const struct client_options *o, int argc, char **argv);
int cmd_env(const struct client_options *o, int argc, char **argv);
int cmd_doctor(const struct client_options *o, int argc, char **argv);
/* topology_cmd.c */
int cmd_topology(const struct client_options *o, int argc, char **argv);
/* env_check_cmd.c: sparkc env --check */
int cmd_env_check(const struct client_options *o);
/* hostfile_cmd.c */
int cmd_hostfile(const struct client_options *o, int argc, char **argv);
/* sparkc plan: the job plan whole (exit 0 when it has a head and this node is a member) */
int cmd_plan(const struct client_options *o, int argc, char **argv);
/* export_cmd.c: sparkc export sparkrun|svd, and sparkc env --check --for sparkrun|svd FILE */
int cmd_export(const struct client_options *o, int argc, char **argv);
int cmd_env_check_file(const struct client_options *o, const char *launcher, const char *path);
/* probe_cmd.c */
int cmd_probe(const struct client_options *o, int argc, char **argv);
/* The collective NCCL probe (collective_cmd.c): nodes "A,B,C" or NULL for every member of the job
 * plan; given: the nccl kind's parameters. Returns the exit status. */
int probe_collective(const struct client_options *o, const char *nodes, json_object *given);
int cmd_history(const struct client_options *o, int argc, char **argv);
int cmd_probe_kinds(const struct client_options *o, int argc, char **argv);
/* cluster_cmd.c */
int cmd_cluster(const struct client_options *o, int argc, char **argv);
/* sparkc doctor --node NAME: that node's doctor, in full when it answers, else from its summary. */
int cluster_doctor_of_node(const struct client_options *o, const char *node);
/* keygen_cmd.c, watch_cmd.c */
int cmd_keygen(const struct client_options *o, int argc, char **argv);
int cmd_watch(const struct client_options *o, int argc, char **argv);
