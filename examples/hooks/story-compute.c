// A hook program for the shipped story model, which never writes code by itself: it makes the
// model's next answer start with a [C: …] region by forcing one character per token.
char want[] = " [C: 847*293]";
int ids[32];
int n = 0;
int at = 0;

// The token whose text is exactly the character c.
int token_of(char c) {
  char buf[32];
  for (int id = 0; id < tok_count(); id++) {
    if (tok_str(id, buf) == 1 && buf[0] == c) return id;
  }
  return -1;
}

void force(int step) {
  if (at >= n) return;
  logit_set(ids[at], logit_get(logit_argmax()) + 100000);
  at++;
}

int main() {
  for (int i = 0; want[i]; i++) ids[n++] = token_of(want[i]);
  hook_set("force", n);
  return 0;
}
