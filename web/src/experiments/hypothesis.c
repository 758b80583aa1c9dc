// Hypothesis testing: what if the top token were gone? Suppress it, measure the change, then
// restore the original distribution; nothing is changed for good.
void test(int step) {
  logit_snapshot(0);
  int top = logit_argmax();
  char buf[32];
  tok_str(top, buf);
  logit_set(top, -100000);
  float diff = logit_diff(0);
  char next[32];
  tok_str(logit_argmax(), next);
  logit_restore(0);
  printf("without '%s' the model would say '%s'; change %.1f", buf, next, diff);
}

int main() {
  hook_set("test", 6);
  return 0;
}
