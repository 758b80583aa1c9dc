// Entropy diary: a hook that only observes, writing down the entropy and the top-1
// probability of every step without touching the distribution.
void diary(int step) {
  int e = vocab_entropy();
  int p = vocab_top1_prob();
  char buf[32];
  tok_str(top_k_token(0), buf);
  printf("H=%d.%03d nats top1=%d.%02d%% '%s'", e / 1000, e % 1000, p / 100, p % 100, buf);
}

int main() {
  hook_set("diary", 40);
  return 0;
}
