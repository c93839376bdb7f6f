/* Issues the system calls named on its command line and prints what each returned, so a
 * test can see a seccomp filter's decisions from the inside.
 *
 * Probes (one per argument):
 *   raw:NR[,ARG...]   syscall(NR, ARG...) with up to six integer arguments (decimal or 0x hex)
 *   mount:TARGET      mount("none", TARGET, "tmpfs", 0, NULL)
 *   mkdir:PATH        mkdir(PATH, 0700)
 *
 * Output: one line per probe, "PROBE RET ERRNO" (ERRNO is 0 when RET is not -1).
 * Exit status: 0 when every probe was understood, 2 on a malformed probe.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int parse_raw(const char *spec, long *nr, long args[6]) {
    char *end;
    errno = 0;
    *nr = strtol(spec, &end, 0);
    if (errno || end == spec)
        return -1;
    for (int i = 0; i < 6; i++)
        args[i] = 0;
    for (int i = 0; *end == ','; i++) {
        if (i == 6)
            return -1;
        const char *start = end + 1;
        errno = 0;
        args[i] = (long)strtoull(start, &end, 0);
        if (errno || end == start)
            return -1;
    }
    return *end == '\0' ? 0 : -1;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *probe = argv[i];
        long ret;
        errno = 0;
        if (strncmp(probe, "raw:", 4) == 0) {
            long nr, a[6];
            if (parse_raw(probe + 4, &nr, a) != 0) {
                fprintf(stderr, "syscall_probe: malformed probe %s\n", probe);
                return 2;
            }
            ret = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
        } else if (strncmp(probe, "mount:", 6) == 0) {
            ret = mount("none", probe + 6, "tmpfs", 0, NULL);
        } else if (strncmp(probe, "mkdir:", 6) == 0) {
            ret = mkdir(probe + 6, 0700);
        } else {
            fprintf(stderr, "syscall_probe: unknown probe %s\n", probe);
            return 2;
        }
        int err = ret == -1 ? errno : 0;
        printf("%s %ld %d\n", probe, ret, err);
        fflush(stdout);
    }
    return 0;
}
