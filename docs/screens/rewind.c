// Watches the first tokens; at step 6 it leaves a memo and rewinds to the start, then bans the
// token the model chose first so the second attempt takes another path.
int cp;
int first = -1;
int banned = 0;
void watch(int step) {
  if (step == 0) first = logit_argmax();
  printf("step %d: top-1 %d%%", step, vocab_top1_prob() / 100);
  if (step == 6 && vm_rewind_len() == 0) {
    vm_rewind_memo("high entropy, try different approach");
    vm_rewind(cp);
    return;
  }
  if (vm_rewind_len() > 0 && !banned) {
    logit_set(first, -1000000);
    banned = 1;
  }
}
int main() { cp = vm_checkpoint(); hook_set("watch", 12); return 0; }
