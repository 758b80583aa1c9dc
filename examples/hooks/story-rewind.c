// A hook program that explores and takes back: it watches the entropy of the next-token
// distribution and, the first time it is high after a few tokens, leaves a memo and rewinds to
// the start of the answer. On the second attempt it bans the first token of the first attempt,
// so the answer takes another path.
int cp;
int first = -1;
int banned = 0;

void watch(int step) {
  int h = vocab_entropy();
  if (step == 0 && first < 0) first = logit_argmax();
  printf("step %d: entropy %d.%03d nats", step, h / 1000, h % 1000);
  if (step >= 4 && h > 1000 && vm_rewind_len() == 0) {
    vm_rewind_memo("high entropy, try different approach");
    vm_rewind(cp);
    return;
  }
  if (vm_rewind_len() > 0 && !banned) {
    logit_set(first, -1000000);
    banned = 1;
  }
}

int main() {
  cp = vm_checkpoint();
  hook_set("watch", 16);
  return 0;
}
