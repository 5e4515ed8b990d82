/*
 * The API methods of the cluster view (both read-only): `cluster`, every node with its sections,
 * age and staleness, the links' newest measurements both ways and the open alerts; and
 * `cluster-doctor`, one node's doctor: this node's own, an up peer's full doctor asked over the
 * peer channel, or else what its summary holds, with a note saying so.
 */
#pragma once

#include "cluster.h"
#include "cluster_doctor.h"
#include "daemon/base/api.h"
#include "daemon/fabric/fabric_api.h"

/* How long `cluster-doctor` waits for a peer's answer before showing its summary. */
#define CLUSTER_DOCTOR_TIMEOUT_USEC 3000000ULL

struct cluster_api_context {
        struct cluster *cluster;
        struct cluster_doctor *doctor;
        const struct fabric_api_context *fabric;
        /* Brings this node's own sections up to date before they are read; may be NULL. */
        void (*freshen)(void *userdata);
        void *freshen_userdata;
};

/* The context must outlive the API server. */
int cluster_api_register(struct api_server *api, struct cluster_api_context *context);
