/*
 * `sparkc doctor`: checks of the node's fabric set-up, each ok / warn / fail with its evidence
 * and the fix, computed from the fabric facts (pure). The overall status is the worst check;
 * sparkc's exit code follows the monitoring-plugin convention (0 ok, 1 warn, 2 fail).
 */
#pragma once

#include <json-c/json.h>

#include "inventory/fabric.h"

enum doctor_status {
        DOCTOR_OK,
        DOCTOR_WARN,
        DOCTOR_FAIL,
};

const char *doctor_status_to_string(enum doctor_status status);

/* {status, checks: [{id, status, summary, evidence: [...], fix}]} */
json_object *doctor_run(const struct fabric_facts *facts);
