// Activation-conditioned decoding: while the residual stream after block 3 at the newest
// position has a large norm, the control vector "happy" (given with --control-vector
// happy.gguf:0: loaded, not applied) steers the next forward pass; otherwise it is removed.
int v;
void watch(int step) {
  int pos = context_len() - 1;
  float n = act_norm("blocks.3.hook_resid_post", pos);
  if (n > 11.5) {
    cvec_apply(v, 1500);
    printf("step %d: |resid_post 3| = %d.%02d at position %d, steering\n", step, (int)n,
           (int)(n * 100) % 100, pos);
  } else {
    cvec_clear();
  }
}
int main() {
  v = cvec_load("happy");
  hook_set("watch", 1000);
  return 0;
}
