// Seed 002's activation-based safety constraint: before each token, look one step ahead with
// the favourite candidate; if the residual stream after block 3 would pass a norm threshold,
// reject that token, take the next best, and log it. vm_lookahead_norm runs the candidate on a
// scratch continuation and leaves the KV cache and logits exactly as they were.
void guard(int step) {
  int rank;
  for (rank = 0; rank < 8; rank++) {
    int tok = top_k_token(0);
    float n = vm_lookahead_norm(tok, 1, "blocks.3.hook_resid_post");
    if (n <= 11.5) return;
    char text[32];
    tok_str(tok, text);
    printf("step %d: rejected '%s' (|resid_post 3| = %d.%02d)\n", step, text, (int)n,
           (int)(n * 100) % 100);
    logit_set(tok, -100000);
  }
}
int main() {
  hook_set("guard", 1000);
  return 0;
}
