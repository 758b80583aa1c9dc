// Suppresses the model's favourite token for the first 3 steps: the story takes another path.
void suppress(int step) {
  char top[32];
  tok_str(logit_argmax(), top);
  printf("step %d: suppressing '%s'\n", step, top);
  logit_set(logit_argmax(), -100000);
}
int main() { hook_set("suppress", 3); return 0; }
