/* A thread other than the main one calls getppid, then execs `true`: the kernel ends the
 * main thread (still sleeping) and gives the exec'd program the main thread's task id
 * (execve(2), "all threads other than the calling thread are destroyed"). Nothing is left
 * running. Used by tests/exec_denials.rs. */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *exec_true(void *unused) {
    (void)unused;
    printf("thread getppid %ld\n", syscall(SYS_getppid));
    fflush(stdout);
    execl("/bin/true", "true", (char *)NULL);
    return NULL;
}

int main(void) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, exec_true, NULL) != 0) {
        return 3;
    }
    sleep(20);
    return 4;
}
