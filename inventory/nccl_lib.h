/*
 * Where the NCCL library is on this host and its version, found without loading it: the library
 * directories the loader searches and CUDA's, the version from the file name, the nccl.h beside
 * it or dpkg's record of libnccl2. The names a directory holds are kept between calls, in one
 * copy per process (not safe to call from two threads at once), and read again once it changed.
 */
#pragma once

struct hostfacts;

/* Fills has_nccl, nccl_path and nccl_version; -ENOMEM is the only error. */
int nccl_lib_find(const char *host_root, struct hostfacts *f);
