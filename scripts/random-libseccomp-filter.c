/* A random libseccomp filter, the same for the same seed (glibc's rand): a random default
 * action, up to three more arches, 10–49 rules over 30 common syscalls with six actions,
 * each with up to three argument comparisons (every operator, 32- and 64-bit values, masks).
 * Exported with seccomp_export_bpf, laid out as libseccomp does at the optimize level given
 * (1: the linear chains runc loads; 2: the binary tree). What README's figures for
 * `secopt optimize` on "random rule sets" come from (scripts/optimize-random-libseccomp.sh).
 * Usage: random-libseccomp-filter SEED OUT.bpf LEVEL */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s SEED OUT.bpf LEVEL\n", argv[0]);
        return 2;
    }
    srand((unsigned)atoi(argv[1]));
    int level = atoi(argv[3]);
    uint32_t defaults[] = {SCMP_ACT_ERRNO(1), SCMP_ACT_KILL_PROCESS, SCMP_ACT_ALLOW,
                           SCMP_ACT_TRAP, SCMP_ACT_LOG};
    uint32_t def = defaults[rand() % 5];
    scmp_filter_ctx ctx = seccomp_init(def);
    uint32_t arches[] = {SCMP_ARCH_X86, SCMP_ARCH_X32, SCMP_ARCH_AARCH64, SCMP_ARCH_ARM,
                         SCMP_ARCH_RISCV64};
    int more = rand() % 4;
    for (int i = 0; i < more; i++)
        seccomp_arch_add(ctx, arches[rand() % 5]);
    const char *names[] = {"read", "write", "openat", "close", "mmap", "ioctl", "socket",
                           "clone", "fcntl", "futex", "prctl", "kill", "setsockopt",
                           "mprotect", "personality", "epoll_ctl", "sendto", "recvfrom",
                           "madvise", "getpid", "exit_group", "pipe2", "dup3", "lseek",
                           "statx", "getrandom", "bpf", "mount", "unshare", "ptrace"};
    uint32_t actions[] = {SCMP_ACT_ALLOW, SCMP_ACT_ERRNO(13), SCMP_ACT_KILL_THREAD,
                          SCMP_ACT_TRACE(5), SCMP_ACT_LOG, SCMP_ACT_ERRNO(1)};
    int rules = 10 + rand() % 40;
    for (int i = 0; i < rules; i++) {
        int nr = seccomp_syscall_resolve_name(names[rand() % 30]);
        uint32_t action = actions[rand() % 6];
        if (action == def)
            action = def == SCMP_ACT_ALLOW ? SCMP_ACT_ERRNO(2) : SCMP_ACT_ALLOW;
        int conditions = rand() % 3;
        struct scmp_arg_cmp cmp[3];
        for (int j = 0; j < conditions; j++) {
            int op = 1 + rand() % 7;
            uint64_t value = (rand() % 2) ? (uint64_t)rand()
                                          : ((uint64_t)rand() << 32) | (uint64_t)rand();
            uint64_t mask = (rand() % 2) ? 0xffffffffffffffffULL
                                         : ((uint64_t)rand() << 33) | (uint64_t)rand();
            cmp[j].arg = j + (rand() % 2) * 2;
            cmp[j].op = op;
            if (op == SCMP_CMP_MASKED_EQ) {
                cmp[j].datum_a = mask;
                cmp[j].datum_b = value & mask;
            } else {
                cmp[j].datum_a = value;
                cmp[j].datum_b = 0;
            }
        }
        /* A rule libseccomp refuses (a conflicting one) is left out, as it leaves it out. */
        (void)seccomp_rule_add_array(ctx, action, nr, conditions, cmp);
    }
    if (level == 2)
        seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[2]);
        return 1;
    }
    int r = seccomp_export_bpf(ctx, fd);
    if (r) {
        fprintf(stderr, "seccomp_export_bpf: %d\n", r);
        return 1;
    }
    close(fd);
    seccomp_release(ctx);
    return 0;
}
