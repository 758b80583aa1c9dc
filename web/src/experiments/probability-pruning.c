// Probability pruning: every logit more than 5.0 below the top one is masked with
// logit_mask_below; the survivors among the top 32 are counted before and after.
int viable() {
  int n = 0;
  for (int r = 0; r < 32 && r < tok_count(); r++)
    if (top_k_prob(r) > 0) n++;
  return n;
}

void prune(int step) {
  int before = viable();
  int threshold = logit_get(logit_argmax()) - 5000;
  logit_mask_below(threshold);
  printf("step %d: %d viable in top 32, masked below %d, %d left", step, before, threshold,
         viable());
}

int main() {
  hook_set("prune", 8);
  return 0;
}
