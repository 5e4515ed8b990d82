/*
 * How a doctor check records its outcome in the result: begun with its id, evidence lines
 * added, ended with its status, summary and fix. The result's status is the worst check's.
 * doctor_status_to_string (doctor.h) lives here too, since every check's status is written
 * with it.
 */
#pragma once

#include <json-c/json.h>

#include "common/macro.h"
#include "doctor.h"

#define MAX_EVIDENCE_LINE 512

struct check {
        json_object *checks;
        json_object *current;
        json_object *evidence;
        enum doctor_status worst;
};

void check_begin(struct check *c, const char *id);
void evidence(struct check *c, const char *fmt, ...) _printf_(2, 3);
/* Ends the current check; fix is shown only when the status is not ok. */
void check_end(struct check *c, enum doctor_status status, const char *fix, const char *fmt, ...)
        _printf_(4, 5);
