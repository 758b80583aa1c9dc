// Self-evaluation: before each of the next 12 tokens, the model reads its own entropy and
// top-1 probability and branches on them.
void judge(int step) {
  int e = vocab_entropy();
  int p = vocab_top1_prob();
  if (e < 2000)
    printf("CONFIDENT (entropy=%d, top1=%d)", e, p);
  else
    printf("UNCERTAIN (entropy=%d, top1=%d)", e, p);
}

int main() {
  hook_set("judge", 12);
  return 0;
}
