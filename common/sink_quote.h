/*
 * Values quoted for the two files a launcher reads (sparkc export): each value is checked here
 * once, on its way into the file, so the file means that value and nothing more.
 *
 *   YAML (sparkrun's cluster file)   sink_quote_yaml      a "double-quoted" scalar: '"' and '\'
 *                                                         escaped, control bytes as \xNN
 *   KEY=VALUE (spark-vllm-docker's   sink_quote_env       "double-quoted", the value limited to
 *   .env, read by bash or a parser                        letters, digits and . , : / = + @ _ -
 *   that strips the quotes)                               so that bash and a quote-stripping
 *                                                         reader see the same bytes; else -EINVAL
 *                                                         and nothing written
 */
#pragma once

#include <stdbool.h>
#include <stdio.h>

void sink_quote_yaml(FILE *f, const char *s);
/* Whether s is non-empty and holds only the characters sink_quote_env writes. */
bool sink_env_value_is_safe(const char *s);
int sink_quote_env(FILE *f, const char *s);
