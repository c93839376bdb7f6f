/* How long the system libseccomp takes on N rules of overlapping ranges on three arguments
 * for ioctl (args[0] > i && args[1] <= 3i && args[2] != i, with ALLOW, LOG and TRAP in turn):
 * the rules of src/compile/tests.rs
 * `a_rule_tree_laid_out_past_a_million_tests_is_refused_not_run_out_of_memory`, whose layout
 * grows exponentially (docs/kernel-facts.md).
 *
 *   gcc scripts/libseccomp-range-rules.c -o /tmp/ranges -lseccomp
 *   /usr/bin/time -f '%e s %M KB' /tmp/ranges 20 /tmp/ranges20.bpf   # prints the size
 */
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s N OUT.bpf\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]);
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(1));
    seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE);
    seccomp_arch_add(ctx, SCMP_ARCH_X86_64);
    uint32_t actions[3] = {SCMP_ACT_ALLOW, SCMP_ACT_LOG, SCMP_ACT_TRAP};
    for (int i = 0; i < n; i++) {
        int rc = seccomp_rule_add(ctx, actions[i % 3], SCMP_SYS(ioctl), 3,
                                  SCMP_A0(SCMP_CMP_GT, i), SCMP_A1(SCMP_CMP_LE, 3 * i),
                                  SCMP_A2(SCMP_CMP_NE, i));
        if (rc != 0)
            fprintf(stderr, "rule %d: %d\n", i, rc);
    }
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || seccomp_export_bpf(ctx, fd) != 0) {
        fprintf(stderr, "cannot export to %s\n", argv[2]);
        return 1;
    }
    struct stat st;
    fstat(fd, &st);
    printf("%d rules: %lld instructions\n", n, (long long)st.st_size / 8);
    return 0;
}
