/*
 * What env_check.c and env_check_vars.c share: the judgement under way (the facts, the findings
 * so far, the environment `sparkc env` gives this node, for the fixes) and the judges of single
 * variables.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "env_check.h"

struct env_judge {
        const struct fabric_facts *f;
        const struct env_settings *effective; /* what NCCL and the others will see */
        json_object *suggested;               /* envgen_build(f, auto)'s variables */
        json_object *findings;
        const char *own_address;      /* this node's address on the job plan's plane, "" when not known */
        const char *bootstrap_ifname; /* the plan's management netdev for the bootstrap, "" for none */
        int worst;                    /* 0 nothing found, 1 a warning, 2 an error */
};

/* Adds a finding about setting s (NULL: about no variable); fix NULL: the fix of the variable
 * (the value `sparkc env` gives, or unsetting it, or removing the file's line). */
void env_finding(struct env_judge *j, bool is_error, const struct env_setting *s, const char *fix,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The value `sparkc env` gives name on this node, NULL when it sets none. */
const char *env_suggested(const struct env_judge *j, const char *name);

/* Judges one variable, if it is one with rules here; returns whether it was. */
bool env_judge_variable(struct env_judge *j, const struct env_setting *s);
