/*
 * insncount: a QEMU TCG plugin (linux-user) counting the guest instructions
 * each guest thread executes, and reporting the count of the calling thread
 * at every "marker" system call the guest makes.
 *
 * Arguments: mark=<syscall number>, out=<file>.
 * Output lines: "mark <arg0> <vcpu> <instructions of that vcpu so far>" at
 * each marker call, and "total <all instructions> <vcpus>" at exit.
 *
 * Counting: every translated block registers an execution callback carrying
 * its instruction count (qemu's contrib insn plugin in its per-block mode),
 * added to the executing vCPU's counter (in linux-user each guest thread is
 * a vCPU). A block counts whole when it starts; blocks end at system calls,
 * so the count at a marker covers every instruction up to the marker's
 * ecall.
 *
 * The declarations below are the subset of QEMU's plugin API (qemu-plugin.h,
 * API version 1, QEMU 7.2) this plugin uses; Debian's qemu-user supports
 * plugins but ships no header.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t {
    const char *target_name;
    struct { int min; int cur; } version;
    bool system_emulation;
    union { struct { int smp_vcpus; int max_vcpus; } system; };
} qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_syscall_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index,
    int64_t num, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
    uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
    enum qemu_plugin_cb_flags flags, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_syscall_cb_t cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_VCPUS 4096
static uint64_t counts[MAX_VCPUS]; /* each written only by its own thread */
static unsigned int seen;          /* highest vCPU index + 1 */
static int64_t mark_nr = -1;
static FILE *out;

static void tb_exec(unsigned int vcpu, void *udata)
{
    counts[vcpu % MAX_VCPUS] += (uintptr_t)udata;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
                                         (void *)(uintptr_t)qemu_plugin_tb_n_insns(tb));
}

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
                       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                       uint64_t a7, uint64_t a8)
{
    (void)id; (void)a2; (void)a3; (void)a4; (void)a5; (void)a6; (void)a7; (void)a8;
    if (vcpu + 1 > seen) seen = vcpu + 1;
    if (num != mark_nr) return;
    fprintf(out, "mark %llu %u %llu\n", (unsigned long long)a1, vcpu,
            (unsigned long long)counts[vcpu % MAX_VCPUS]);
    fflush(out);
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
    (void)id; (void)p;
    unsigned long long total = 0;
    for (int i = 0; i < MAX_VCPUS; i++) total += counts[i];
    fprintf(out, "total %llu %u\n", total, seen);
    fclose(out);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    const char *path = NULL;
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "mark=", 5) == 0) mark_nr = strtoll(argv[i] + 5, NULL, 0);
        else if (strncmp(argv[i], "out=", 4) == 0) path = argv[i] + 4;
        else { fprintf(stderr, "insncount: unknown argument %s\n", argv[i]); return -1; }
    }
    if (mark_nr < 0 || path == NULL) {
        fprintf(stderr, "insncount: need mark=<syscall number> and out=<file>\n");
        return -1;
    }
    out = fopen(path, "w");
    if (out == NULL) { perror("insncount: out"); return -1; }
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
