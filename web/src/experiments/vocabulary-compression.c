// Vocabulary compression: among the top 20 candidates, tokens longer than 5 bytes are
// suppressed, for 30 tokens: short words only.
void compress(int step) {
  int cut = 0;
  int ids[20];
  for (int r = 0; r < 20; r++) ids[r] = top_k_token(r);
  for (int r = 0; r < 20; r++) {
    char buf[32];
    if (tok_str(ids[r], buf) > 5) {
      logit_set(ids[r], -100000);
      cut++;
    }
  }
  printf("suppressed %d long tokens of the top 20", cut);
}

int main() {
  hook_set("compress", 30);
  return 0;
}
