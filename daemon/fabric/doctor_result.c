#include "doctor_result.h"

#include <stdarg.h>
#include <stdio.h>

const char *doctor_status_to_string(enum doctor_status status)
{
        switch (status) {
        case DOCTOR_OK:
                return "ok";
        case DOCTOR_WARN:
                return "warn";
        default:
                return "fail";
        }
}

void check_begin(struct check *c, const char *id)
{
        c->current = json_object_new_object();
        c->evidence = json_object_new_array();
        json_object_object_add(c->current, "id", json_object_new_string(id));
}

void evidence(struct check *c, const char *fmt, ...)
{
        char line[MAX_EVIDENCE_LINE];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        json_object_array_add(c->evidence, json_object_new_string(line));
}

void check_end(struct check *c, enum doctor_status status, const char *fix, const char *fmt, ...)
{
        char summary[MAX_EVIDENCE_LINE];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(summary, sizeof(summary), fmt, ap);
        va_end(ap);
        json_object_object_add(c->current, "status",
                               json_object_new_string(doctor_status_to_string(status)));
        json_object_object_add(c->current, "summary", json_object_new_string(summary));
        json_object_object_add(c->current, "evidence", c->evidence);
        json_object_object_add(c->current, "fix",
                               status != DOCTOR_OK && fix ? json_object_new_string(fix) : NULL);
        json_object_array_add(c->checks, c->current);
        if (status > c->worst)
                c->worst = status;
}
