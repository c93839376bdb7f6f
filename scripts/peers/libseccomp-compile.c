// libseccomp-compile NAMES OPTIMIZE OUT.bpf: tests/data/peers/docker-allow.json's policy
// through the system libseccomp (default KILL_THREAD, x86_64 alone as the host's arch): every
// name of the NAMES file (one a line) allowed, plus personality(0, 8, 0x20000, 0x20008,
// 0xffffffff) as Docker's profile has it. OPTIMIZE is SCMP_FLTATR_CTL_OPTIMIZE: 1 linear,
// 2 binary tree. For scripts/peers/compare.sh; build with `gcc … -lseccomp`.
#include <seccomp.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: libseccomp-compile NAMES OPTIMIZE OUT.bpf\n");
    return 2;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL);
  if (!ctx || seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, atoi(argv[2]))) return 1;
  FILE *names = fopen(argv[1], "r");
  if (!names) { perror(argv[1]); return 2; }
  char line[128];
  while (fgets(line, sizeof line, names)) {
    line[strcspn(line, "\n")] = 0;
    int nr = seccomp_syscall_resolve_name(line);
    if (nr == __NR_SCMP_ERROR || seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0)) {
      fprintf(stderr, "%s: cannot add\n", line);
      return 1;
    }
  }
  const unsigned long long persona[] = {0, 8, 0x20000, 0x20008, 0xffffffff};
  for (int i = 0; i < 5; i++)
    if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality), 1,
                         SCMP_A0(SCMP_CMP_EQ, persona[i])))
      return 1;
  int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) { perror(argv[3]); return 2; }
  int rc = seccomp_export_bpf(ctx, fd);
  close(fd);
  seccomp_release(ctx);
  return rc ? 1 : 0;
}
