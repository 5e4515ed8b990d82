/*
 * A message written into a connection's output as JSON text, piece by piece: the texts held as
 * json_raw values (a node's summary sections, the cluster's links view, some hundreds of KiB at
 * 32 nodes) are queued by reference and written from where they lie, everything else is copied.
 * One text of the whole message was built for every call before, and that buffer, larger than
 * glibc's mmap threshold, was mapped, faulted in page by page and unmapped again each time: most
 * of a cluster call's CPU. The bytes are those jsonrpc_to_string gives.
 */
#pragma once

#include <event2/buffer.h>
#include <json-c/json.h>

/* Appends msg's text to out; 0 or -ENOMEM (out then holds part of it). */
int api_write_json(struct evbuffer *out, json_object *msg);
