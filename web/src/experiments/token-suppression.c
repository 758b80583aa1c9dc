// Token suppression: for 6 tokens the model finds its most likely next token and sets its
// logit far below the rest, so the sampler takes another.
void suppress(int step) {
  int top = logit_argmax();
  char buf[32];
  tok_str(top, buf);
  logit_set(top, -100000);
  char next[32];
  tok_str(logit_argmax(), next);
  printf("suppressing '%s' -> '%s'", buf, next);
}

int main() {
  hook_set("suppress", 6);
  return 0;
}
