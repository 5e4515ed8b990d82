/*
 * The parsers of the keys whose value is a list of words: [peers] static, [probe] kinds and
 * rdma_twins, [counters] fatal. Each checks every word against what it may be and replaces the
 * config's list as a whole (conf_keys.c's table names them).
 */
#pragma once

#include "conf_keys.h"

int conf_parse_static_peers(struct conf_parse *p, const char *value, const char **why);
int conf_parse_probe_kinds(struct conf_parse *p, const char *value, const char **why);
int conf_parse_rdma_twins(struct conf_parse *p, const char *value, const char **why);
int conf_parse_counters_fatal(struct conf_parse *p, const char *value, const char **why);
