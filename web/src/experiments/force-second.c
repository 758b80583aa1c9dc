// Force the second choice: for 20 tokens a hook lifts the runner-up above the favourite.
void force_second(int step) {
  int top1 = top_k_token(0);
  int top2 = top_k_token(1);
  logit_set(top2, logit_get(top1) + 10000);
  char b1[32], b2[32];
  tok_str(top1, b1);
  tok_str(top2, b2);
  printf("'%s' -> '%s'", b1, b2);
}

int main() {
  hook_set("force_second", 20);
  return 0;
}
