/*
 * Outside text escaped on its way out: one function per sink, used by every writer to that sink,
 * so that no sink carries a peer's, a switch's or a file's bytes as they came. Values were checked
 * at the door (text_check.h); these make what a sink reads mean that value and nothing more,
 * whatever bytes it holds.
 *
 *   shell values      escape_sh_value       'single quoted', a quote closed, escaped, reopened
 *   comment lines     escape_comment        the text of a "# ..." line of a shell script, a
 *                                           docker env-file or a systemd drop-in: control
 *                                           characters and bytes that are not UTF-8 as \xNN and
 *                                           a backslash doubled, so the comment ends where its
 *                                           line does and never continues onto the next
 *   systemd           escape_systemd_value  the VALUE of Environment="NAME=VALUE": '%' doubled
 *                                           (a specifier), '"' and '\' escaped, controls as \xNN
 *   docker env-file   escape_docker_value   NAME=VALUE is read raw to the end of its line, with
 *                                           no escapes at all: a value holding a control
 *                                           character cannot be written and is refused
 *   YAML              escape_yaml           a "double-quoted" scalar, controls as \xNN
 *   launcher .env     escape_env_file_value "double-quoted", the value limited to letters, digits
 *                                           and . , : / = + @ _ - so that bash and a reader that
 *                                           strips the quotes see the same bytes; anything else
 *                                           is refused (-EINVAL) and nothing is written
 *   terminal          escape_term           control characters and bytes that are not UTF-8 as
 *                                           \xNN (escape sequences, fake lines, reordering)
 *   log               escape_log            the same, into a buffer, for log messages
 *   Graphviz          (topology_render.c)   "quoted" ID strings with '"' and '\' escaped
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

void escape_sh_value(FILE *f, const char *s);
void escape_comment(FILE *f, const char *s);
void escape_systemd_value(FILE *f, const char *s);
/* -EINVAL, writing nothing, when s holds a control character. */
int escape_docker_value(FILE *f, const char *s);
void escape_yaml(FILE *f, const char *s);
/* Whether s is non-empty and holds only the characters escape_env_file_value writes. */
bool escape_env_file_value_is_safe(const char *s);
int escape_env_file_value(FILE *f, const char *s);
void escape_term(FILE *f, const char *s);
/* escape_term into a new string; NULL when out of memory. */
char *escape_term_dup(const char *s);
/* escape_term of every string of o, keys and values, in place: what a program that shows a
 * daemon's reply as text does once, before any of it reaches the terminal; -ENOMEM. */
int escape_term_json(json_object *o);
/* escape_term of s into dst (size > 0), cut where it does not fit; returns the length written. */
size_t escape_log(char *dst, size_t size, const char *s);
