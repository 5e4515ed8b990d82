/*
 * The cluster's links as an N x N table of one probe kind's number: a row per node measured
 * from, a column per node measured to, from the `cluster` method's "links".
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>

/* The number a kind's links carry ("gbps", "rtt_median_us"...); NULL for an unknown kind. */
const char *cluster_metric_of(const char *kind);
/* value with its unit: "9.41 Gb/s", "12.5 us", "9000". */
void cluster_metric_format(char *buf, size_t size, double value, const char *metric);
void cluster_matrix_print(FILE *out, json_object *result, const char *kind);
