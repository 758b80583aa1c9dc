// Status report: one call that asks the live model about its context, vocabulary, next-token
// prediction, entropy and shape.
void report(int step) {
  char top[32];
  tok_str(top_k_token(0), top);
  printf("Tokens in context: %d\n", context_len());
  printf("Vocab size: %d\n", tok_count());
  printf("Top prediction: '%s' (p=%d)\n", top, top_k_prob(0));
  printf("Entropy: %d (millinats)\n", vocab_entropy());
  printf("Layers: %d, KV heads: %d, head dim: %d\n", kv_layers(), kv_heads(), kv_head_dim());
  printf("Status: %s", vocab_entropy() < 3000 ? "ACTIVE, CONFIDENT" : "ACTIVE, EXPLORING");
}

int main() {
  hook_set("report", 1);
  return 0;
}
