// Time travel: checkpoint at the start, let the model write 12 tokens, then rewind with a memo.
// In the second timeline the hook reads the memo and bans the token the first timeline began with.
int start;
int banned = -1;
void watch(int step) {
  if (vm_rewind_len() == 0 && step == 12) {
    memory[0] = context_token(context_len() - 12);
    vm_rewind_memo("first timeline began predictably; ban its first token");
    vm_rewind(start);
    return;
  }
  if (vm_rewind_len() > 0 && banned < 0) {
    banned = memory[0];
    printf("new timeline: banning token %d\n", banned);
  }
  if (banned >= 0) logit_set(banned, -100000);
}
int main() { start = vm_checkpoint(); hook_set("watch", 40); return 0; }
