/*
 * The PCIe link of a PCI function and its AER error counters, from sysfs under the host root
 * (bus/pci/devices/ADDR or any path to the function's directory): what `lspci -vv` shows as
 * LnkSta/LnkCap and what the kernel counts in aer_dev_fatal/aer_dev_nonfatal. A DGX Spark rail
 * is a ConnectX-7 function at 32 GT/s x4; one that trained lower moves less than its Ethernet
 * speed says. Nothing here fails a scan: what cannot be read stays unknown.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

struct pcie_link {
        bool is_known;    /* the link attributes could be read */
        double speed_gts; /* current link speed in GT/s, 0 unknown */
        double max_speed_gts;
        unsigned width; /* current lanes, 0 unknown */
        unsigned max_width;
        bool has_aer;       /* the kernel exposes AER counters for the function */
        uint64_t aer_fatal; /* TOTAL_ERR_FATAL since boot */
        uint64_t aer_nonfatal;
        /* Filled by the daemon's AER watch (aer_watch.c), not by the scan: fatal errors counted
         * since its first look at the function and since its previous look. -1: no earlier look. */
        int64_t aer_fatal_since_start;
        int64_t aer_fatal_since_last;
};

/* Reads the link of the PCI function whose sysfs directory is ROOT/PATH. */
void pcie_link_read(const char *root, const char *path, struct pcie_link *out);
/* A DGX Spark rail: one ConnectX-7 function on a 32 GT/s x4 link, behind a QSFP port whose
 * netdev negotiates 200 Gb/s Ethernet. */
#define SPARK_RAIL_GTS           32.0
#define SPARK_RAIL_WIDTH         4
#define SPARK_RAIL_ETHERNET_MBPS 200000
/* The function can do 32 GT/s x4 (what it trained at is another question). */
bool pcie_link_is_spark_capable(const struct pcie_link *link);
/* Trained at 32 GT/s x4 right now. */
bool pcie_link_is_spark_trained(const struct pcie_link *link);
/* Below what it can do: slower or narrower than its maximum. */
bool pcie_link_is_degraded(const struct pcie_link *link);
/* "32 GT/s x4" (current) into buf; "unknown" when not read. */
const char *pcie_link_format(double gts, unsigned width, char *buf, size_t size);
json_object *pcie_link_to_json(const struct pcie_link *link);

/* Pure parsers, exposed for tests. */
int pcie_parse_speed(const char *s, double *gts);                        /* "32.0 GT/s PCIe" */
int pcie_parse_aer_total(const char *s, const char *key, uint64_t *out); /* "...\nTOTAL_ERR_FATAL 0" */
