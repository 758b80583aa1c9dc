// Snapshot and compare: save the logits, apply temperature 2.0, and measure how far the
// distribution moved with logit_diff.
void compare(int step) {
  logit_snapshot(0);
  logit_temperature(2000);
  float diff = logit_diff(0);
  char buf[32];
  tok_str(logit_argmax(), buf);
  printf("step %d: total |current - snapshot| = %.1f, top token '%s'", step, diff, buf);
  logit_restore(0);
}

int main() {
  hook_set("compare", 4);
  return 0;
}
