// Cosine similarity and embedding variance: how alike the hidden states of neighbouring
// positions are after layer 0, and how much each one varies.
void geometry(int step) {
  int last = context_len() - 1;
  for (int pos = last - 3; pos < last; pos++) {
    if (pos < 0) continue;
    char a[32], b[32];
    tok_str(context_token(pos), a);
    tok_str(context_token(pos + 1), b);
    printf("'%s' vs '%s': cosine %.3f, variance %.4f\n", a, b, cosine_sim(0, pos, pos + 1),
           emb_variance(0, pos));
  }
}

int main() {
  hook_set("geometry", 1);
  return 0;
}
