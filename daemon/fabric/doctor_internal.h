/* How doctor.c and doctor_rails.c add checks to one doctor result; not for other modules. */
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

/* doctor_rails.c: the PCIe link, Ethernet speed and AER counters of every RDMA device. */
void doctor_check_rails(struct check *c, const struct fabric_facts *f);
/* doctor_profiles.c: the MTU NetworkManager or netplan will apply to each fabric netdev. */
void doctor_check_profiles(struct check *c, const struct fabric_facts *f);
