/*
 * What sparkd and sparkc agree on: the control API's version, default paths, limits and the
 * JSON-RPC error codes.
 *
 * API version rules: bump SPARKD_API_VERSION only when the shape of an existing method's params
 * or result changes incompatibly. New methods and new fields in a result need no bump; clients
 * ignore fields they do not know. Every result object carries "api_version" (the daemon's API
 * layer adds it to each answer).
 *   1: status, version, reload, subscribe (event notifications "event").
 */
#pragma once

#define SPARKD_API_VERSION 1

/* One request or response is one JSON object on one line, at most this many bytes. */
#define SPARKD_MAX_LINE (64 * 1024)
/* One answer of the daemon is at most this many bytes, and sparkc reads that much: the largest,
 * `cluster` with CLUSTER_MAX_NODES summaries of SUMMARY_MAX_BYTES (256 of 56 KiB, 14 MiB), fits
 * with room (checked where the cluster view is answered); a larger one is answered with an error
 * naming this limit. */
#define SPARKD_MAX_REPLY (16 * 1024 * 1024)

#define SPARKD_SOCKET_ENV "SPARKD_SOCKET"

/* JSON-RPC 2.0 standard error codes. */
#define RPC_PARSE_ERROR      -32700
#define RPC_INVALID_REQUEST  -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS   -32602
#define RPC_INTERNAL_ERROR   -32603
/* Server errors (-32000 to -32099) that sparkd defines. */
#define RPC_PERMISSION_DENIED -32001
#define RPC_CONFIG_INVALID    -32002
#define RPC_BUSY              -32003
