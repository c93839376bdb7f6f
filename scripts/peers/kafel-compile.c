#include <stdio.h>
#include <stdlib.h>
#include <linux/filter.h>
#include "kafel.h"
int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: kc POLICY OUT.bpf\n"); return 2; }
  FILE *f = fopen(argv[1], "r");
  if (!f) { perror(argv[1]); return 2; }
  kafel_ctxt_t ctxt = kafel_ctxt_create();
  kafel_set_input_file(ctxt, f);
  struct sock_fprog prog;
  if (kafel_compile(ctxt, &prog)) { fprintf(stderr, "%s\n", kafel_error_msg(ctxt)); return 1; }
  FILE *o = fopen(argv[2], "wb");
  fwrite(prog.filter, sizeof(struct sock_filter), prog.len, o);
  fclose(o);
  fprintf(stderr, "%u instructions\n", prog.len);
  return 0;
}
