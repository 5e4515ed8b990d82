/* A collective NCCL probe's result for people: the verdict, nccl-tests' table (op, bytes, time,
 * algbw, busbw, correct) and one line per rank (node, status, stage, last phase, transport, phase
 * timings, error). The result was escaped for the terminal where it came in (client_call). */
#pragma once

#include <json-c/json.h>
#include <stdio.h>

void collective_table_print(FILE *f, json_object *report);
