// Rewind with a memo: a checkpoint before the answer; the first timeline writes 6 tokens while
// the hook notes the highest entropy, then leaves a memo and rewinds. The second timeline reads
// the memo (memory[] and the memo survive a rewind) and lets the answer run.
int cp;
int peak = 0;
int told = 0;

void explore(int step) {
  int h = vocab_entropy();
  if (h > peak) peak = h;
  if (vm_rewind_len() == 0) {
    printf("exploring: entropy %d.%03d nats", h / 1000, h % 1000);
    if (step == 6) {
      char memo[64];
      sprintf(memo, "peak entropy %d millinats, try again", peak);
      vm_rewind_memo(memo);
      vm_rewind(cp);
    }
    return;
  }
  if (!told) {
    told = 1;
    char memo[64];
    int n = vm_rewind_len();
    for (int i = 0; i < n && i < 63; i++) memo[i] = vm_rewind_read(i);
    memo[n < 63 ? n : 63] = 0;
    printf("previous timeline said: %s", memo);
  }
}

int main() {
  cp = vm_checkpoint();
  hook_set("explore", 24);
  return 0;
}
