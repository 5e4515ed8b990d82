/*
 * Whether DMA-BUF GPU Direct is possible on this host, and why (not): it needs the open NVIDIA
 * kernel module 580 or later and a kernel whose RDMA stack imports dma-bufs (5.12 or later).
 */
#pragma once

struct hostfacts;

/* Sets is_dmabuf_possible and dmabuf_reason from the driver facts already read and the kernel. */
void dmabuf_decide(const char *host_root, struct hostfacts *f);
