/* Times one system call under a stack of seccomp filters (scripts/stack-bench.sh).
 *
 * usage: stack_timer NR FILTER.bpf...   (filters installed oldest first; none: no filter)
 * Pins itself to CPU 0, sets no_new_privs, installs the filters, then calls syscall NR with
 * all-zero arguments 2,000,000 times per round and prints the best round's ns per call. */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void install(const char *path) {
    static struct sock_filter buf[4096];
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    size_t n = fread(buf, sizeof buf[0], 4096, f);
    fclose(f);
    struct sock_fprog prog = { .len = (unsigned short)n, .filter = buf };
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) { perror(path); exit(2); }
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s NR [FILTER.bpf...]\n", argv[0]); return 2; }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    sched_setaffinity(0, sizeof set, &set);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) { perror("no_new_privs"); return 2; }
    long nr = atol(argv[1]);
    for (int i = 2; i < argc; i++) install(argv[i]);
    const long calls = 2000000;
    double best = 1e18;
    for (int round = 0; round < 7; round++) {
        double t0 = now_ns();
        for (long i = 0; i < calls; i++) syscall(nr, 0, 0, 0, 0, 0, 0);
        double per_call = (now_ns() - t0) / calls;
        if (per_call < best) best = per_call;
    }
    printf("%.1f\n", best);
    return 0;
}
