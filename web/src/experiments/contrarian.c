// Contrarian: for 16 tokens the token ranked 31st is forced, the least preferred of the
// plausible ones; the model writes around it.
void contrarian(int step) {
  int rank = 31;
  if (rank >= tok_count()) rank = tok_count() - 1;
  int pick = top_k_token(rank);
  logit_set(pick, logit_get(logit_argmax()) + 10000);
  char buf[32];
  tok_str(pick, buf);
  printf("rank %d: '%s' (p=%d)", rank, buf, top_k_prob(rank));
}

int main() {
  hook_set("contrarian", 16);
  return 0;
}
