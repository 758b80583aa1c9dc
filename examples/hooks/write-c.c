// Makes the model write " [C: 847*293]" by boosting one character's token per step: the VM runs
// the region when it closes and the result is injected before the model goes on.
char target[] = " [C: 847*293]";
int at = 0;
int token_for(char *piece) {
  char buf[32];
  for (int id = 0; id < tok_count(); id++) {
    tok_str(id, buf);
    if (strcmp(buf, piece) == 0) return id;
  }
  return -1;
}
void write(int step) {
  if (target[at] == 0) return;
  char piece[2] = {target[at], 0};
  int id = token_for(piece);
  if (id >= 0) logit_set(id, logit_get(logit_argmax()) + 100000);
  at++;
}
int main() { hook_set("write", sizeof(target) - 1); return 0; }
