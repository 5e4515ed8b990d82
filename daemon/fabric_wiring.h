/* The fabric methods' context: the callbacks through which the fabric layer reads what the
 * peers, probes, cluster view, cabling map and lldpd know, so that daemon/fabric/ never calls
 * those modules itself. */
#pragma once

#include "daemon.h"

/* Fills d->fabric_api, points the probes at the fabric facts and the cabling map, publishes the
 * software section and takes the first look at the facts (the AER counts later ones compare
 * with). */
void sparkd_wire_fabric_facts(struct sparkd *d);
