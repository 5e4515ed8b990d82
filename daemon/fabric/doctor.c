#include "doctor.h"

#include "doctor_checks.h"

/* The order of the checks is the report's, which the golden files hold. */
json_object *doctor_run(const struct fabric_facts *f)
{
        struct check c = { .checks = json_object_new_array(), .worst = DOCTOR_OK };
        json_object *o = json_object_new_object();

        if (f->is_rdma_declared_off) {
                /* A fabric declared without RDMA: what RDMA needs is not checked, and not missed. */
                doctor_check_socket_fabric(&c, f);
                doctor_check_mtu(&c, f);
                doctor_check_profiles(&c, f);
                doctor_check_sysctls(&c, f);
                doctor_check_gpu(&c, f);
                doctor_check_nccl(&c, f);
        } else {
                doctor_check_rdma_devices(&c, f);
                doctor_check_ports(&c, f);
                doctor_check_mtu(&c, f);
                doctor_check_profiles(&c, f);
                doctor_check_sysctls(&c, f);
                doctor_check_memlock(&c, f);
                doctor_check_twin_subnets(&c, f);
                doctor_check_twins_up(&c, f);
                doctor_check_port_addresses(&c, f);
                doctor_check_gpu(&c, f);
                doctor_check_gdr_risk(&c, f);
                doctor_check_roce_gid(&c, f);
                doctor_check_nccl(&c, f);
                doctor_check_rails(&c, f);
                doctor_check_port_counters(&c, f);
        }
        if (f->peers)
                doctor_check_peers(&c, f);
        if (f->firewall)
                doctor_check_firewall(&c, f);
        if (f->software_nodes)
                doctor_check_consistency(&c, f);
        if (f->lldpd_status)
                doctor_check_lldpd(&c, f);
        if (f->topology)
                doctor_check_topology(&c, f);
        if (f->name_clashes && json_object_array_length(f->name_clashes))
                doctor_check_names(&c, f);
        json_object_object_add(o, "status", json_object_new_string(doctor_status_to_string(c.worst)));
        json_object_object_add(o, "checks", c.checks);
        return o;
}
