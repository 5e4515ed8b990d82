/*
 * The job plan: a function of the cluster view's nodes (job_nodes.h), so every node that holds
 * the same view makes the same plan.
 * - Members: every node whose summary is fresh, whose doctor does not fail and that published its
 *   addresses; every other node is left out with why.
 * - The plane the rendezvous and NCCL's bootstrap use: the fabric when one fabric subnet holds an
 *   address of every member (two nodes, a switch), since then one address per node reaches all
 *   the others; else the management network (the address of each node's IPv4 default route), as
 *   on rings and partial meshes, where a fabric address reaches only the neighbour on its cable.
 *   Data stays on the fabric either way.
 * - The head: [cluster] head when it names exactly one node of the view and that node is a
 *   member (else no head: a node that saw it healthy would pick it, and the job would have two
 *   rendezvous points); without it, the member first by name, then node id.
 * - Ranks: the head 0 (torchrun's rank 0 hosts the rendezvous store), then by name, then node id.
 * - A digest: FNV-1a (common/fnv1a.h) over a canonical text of what a job's nodes must agree on
 *   (the plane, the rendezvous address, the head, and each member's rank, id, name and address),
 *   written by this module, so it does not depend on how a JSON library writes numbers or spaces.
 *   The nodes left out and the reasons (which carry ages) are not in it.
 * Pure.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "job_nodes.h"

#define JOB_PLAN_FORMAT 1

/* Whether name names exactly one node id of nodes, none of them marked is_name_shared (the
 * cluster table holds another id by that name): a name two nodes answer to makes no head. */
bool job_plan_name_is_unique(const struct job_nodes *nodes, const char *name);

/*
 * {format, digest, plane, plane_why, head: {name, node_id, address (the rendezvous), why} | null, error (why
 * there is no head) | null, nodes: [{rank, name, node_id, address, ifname, self, doctor}] in rank order,
 * left_out: [{name, node_id, address, reason}], rank (this node's, null when left out), size, self:
 * {address, ifname} | null (this node's address on the plane and its netdev, when it is a member)}.
 * head_name: [cluster] head, NULL for none.
 */
json_object *job_plan_build(const struct job_nodes *nodes, const char *head_name);
/* The same with [cluster] rendezvous: "auto" (as above), "management" (always), or "fabric" (where
 * no subnet holds every member, the owner routes between them: each member at its lowest fabric
 * address). */
json_object *job_plan_build_on(const struct job_nodes *nodes, const char *head_name, const char *plane);
