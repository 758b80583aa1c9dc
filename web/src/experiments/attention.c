// Attention analysis: which earlier position the last one attends to most, for every head of
// layer 0.
void attend(int step) {
  int q = context_len() - 1;
  int n = q + 1;
  float *scores = malloc(n * sizeof(float));
  for (int head = 0; head < kv_heads(); head++) {
    attn_score(0, head, q, scores, n);
    int best = 0;
    for (int i = 1; i < n; i++)
      if (scores[i] > scores[best]) best = i;
    char buf[32];
    tok_str(context_token(best), buf);
    printf("layer 0 head %d: pos %d attends most to pos %d '%s' (%.3f)\n", head, q, best, buf,
           scores[best]);
  }
}

int main() {
  hook_set("attend", 1);
  return 0;
}
