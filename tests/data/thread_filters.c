/* A process whose threads have different seccomp stacks, for `secopt dump` (tests/dump_cli.rs).
 *
 * Seccomp filters are per thread: a thread inherits its creator's stack when it is created, and
 * a filter installed without SECCOMP_FILTER_FLAG_TSYNC applies to the installing thread alone.
 * Here the three workers are created before any filter exists; two of them then install
 * filter B (2 instructions) twice, the third installs nothing, and the main thread installs
 * filter A (1 instruction) once. It prints "ready" once every thread is set up, then sleeps until killed.
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct sock_filter filter_a[] = {
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
static struct sock_filter filter_b[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static pthread_barrier_t set_up;

static void install(struct sock_filter *f, unsigned short len) {
    struct sock_fprog prog = {len, f};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
        perror("seccomp");
        exit(1);
    }
}

static void *worker(void *with_filter) {
    if (with_filter) {
        install(filter_b, 2);
        install(filter_b, 2);
    }
    pthread_barrier_wait(&set_up);
    for (;;)
        pause();
    return NULL;
}

int main(void) {
    pthread_t t;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        perror("prctl");
        return 1;
    }
    pthread_barrier_init(&set_up, NULL, 4);
    pthread_create(&t, NULL, worker, (void *)1);
    pthread_create(&t, NULL, worker, (void *)1);
    pthread_create(&t, NULL, worker, NULL);
    install(filter_a, 1);
    pthread_barrier_wait(&set_up);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
