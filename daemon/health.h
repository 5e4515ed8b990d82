/*
 * The node's health in one line, for the status method: ok, warn or fail, the first thing to fix
 * and the command that shows more. It comes from the links (flapping, gone down, drifting), the
 * peers (rejected, down) and the doctor's verdict, which judges the rest, the probes' last
 * verdicts included.
 */
#pragma once

#include <json-c/json.h>
#include <stdint.h>

#include "daemon/fabric/fabric_api.h"
#include "daemon/host/links.h"
#include "daemon/peers/peers.h"

/* The longest first_problem, in bytes: a longer summary is shortened at a word ("..."). */
#define HEALTH_SUMMARY_MAX 300

/* {status, first_problem, command} from the links method's list, the peers method's result and
 * the doctor's result (each may be NULL: not known). first_problem and command are null when the
 * status is ok. The status is the worst problem's; first_problem is the worst fact of now (links,
 * peers, the doctor's checks of the node as it is) before a verdict on an earlier measurement
 * (the doctor's rail-bandwidth), so a link down leads over an old probe verdict. Pure. */
json_object *health_build(json_object *links, json_object *peers, json_object *doctor);

/* Every standing problem of the links (flapping, gone down, drifting) and peers (rejected, down):
 * [{id, status, subject, summary, since, command}], status "warn" or "fail", since the ISO time
 * it began when known. Pure. */
json_object *health_problems(json_object *links, json_object *peers);

/* The health line kept between calls: made again only when the doctor's kept result is
 * (doctor_keep.h), which every event and the passing second make due. */
struct health_kept {
        json_object *line; /* NULL: not made yet */
        uint64_t generation;
};

void health_kept_clear(struct health_kept *kept);

/* health_build over what the daemon knows, with the doctor's kept result: a new reference to the
 * line kept in kept (NULL: made for this call only). */
json_object *health_of_node(struct health_kept *kept, struct links *links, struct peers *peers,
                            const struct fabric_api_context *fabric);
