// Temperature before and after: the top 3 tokens, then logit_temperature(2000) (T = 2.0),
// then the top 3 again; the distribution flattens.
void top3(char *title) {
  printf("%s\n", title);
  for (int r = 0; r < 3; r++) {
    char buf[32];
    tok_str(top_k_token(r), buf);
    int p = top_k_prob(r);
    printf("#%d: '%s' prob=%d.%02d%%\n", r + 1, buf, p / 100, p % 100);
  }
}

void scale(int step) {
  top3("=== before temperature scaling ===");
  logit_temperature(2000);
  top3("=== after logit_temperature(2000) ===");
}

int main() {
  hook_set("scale", 1);
  return 0;
}
