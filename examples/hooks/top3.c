// Prints the three most likely next tokens and the entropy before each of the first 6 tokens.
void show(int step) {
  char a[32], b[32], c[32];
  tok_str(top_k_token(0), a);
  tok_str(top_k_token(1), b);
  tok_str(top_k_token(2), c);
  printf("step %d  H=%d mnat  '%s' %d.%02d%%  '%s' %d.%02d%%  '%s' %d.%02d%%\n", step,
         vocab_entropy(), a, top_k_prob(0) / 100, top_k_prob(0) % 100, b,
         top_k_prob(1) / 100, top_k_prob(1) % 100, c, top_k_prob(2) / 100, top_k_prob(2) % 100);
}
int main() { hook_set("show", 6); return 0; }
