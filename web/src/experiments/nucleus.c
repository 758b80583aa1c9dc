// Nucleus: logit_top_p(9000) keeps the smallest set of tokens holding 90% of the probability
// and masks the rest.
int kept() {
  int n = 0;
  for (int r = 0; r < 64 && r < tok_count(); r++)
    if (top_k_prob(r) > 0) n++;
  return n;
}

void nucleus(int step) {
  int before = kept();
  logit_top_p(9000);
  printf("step %d: top-p 0.90 kept %d of %d candidates", step, kept(), before);
}

int main() {
  hook_set("nucleus", 8);
  return 0;
}
