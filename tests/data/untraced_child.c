/* Starts a child with CLONE_UNTRACED, which no tracer can follow: with `clone` (flags in a
 * register) by default, with `clone3` (flags in the `struct clone_args` in memory,
 * include/uapi/linux/sched.h: its version-0 layout is eight u64, `flags` first and
 * `exit_signal` fifth) when the first argument is "clone3". The child makes 8 getppid and
 * prints the last one's result ("child getppid N"); the parent then makes 1 and prints it
 * ("parent getppid N"). Used by tests/record.rs and tests/exec_denials.rs. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long pid;
    if (argc > 1 && strcmp(argv[1], "clone3") == 0) {
        uint64_t args[8] = {0};
        args[0] = CLONE_UNTRACED;
        args[4] = SIGCHLD;
        pid = syscall(SYS_clone3, args, sizeof args);
    } else {
        pid = syscall(SYS_clone, SIGCHLD | CLONE_UNTRACED, 0, 0, 0, 0);
    }
    if (pid < 0) {
        perror("clone");
        return 3;
    }
    if (pid == 0) {
        long last = 0;
        for (int i = 0; i < 8; i++)
            last = syscall(SYS_getppid);
        printf("child getppid %ld\n", last);
        fflush(stdout);
        _exit(0);
    }
    waitpid(pid, 0, 0);
    printf("parent getppid %ld\n", syscall(SYS_getppid));
    return 0;
}
