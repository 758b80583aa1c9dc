// Prints the probability of " happy" and of " sad"'s first piece before the first token, so a
// control vector's effect shows on the command line (stories260K spells " sad" as " sa" + "d").
int find(char *piece) {
  char buf[32];
  int id;
  for (id = 0; id < tok_count(); id++) {
    tok_str(id, buf);
    if (strcmp(buf, piece) == 0) return id;
  }
  return -1;
}
int prob(int id) {
  int r;
  for (r = 0; r < 64; r++)
    if (top_k_token(r) == id) return top_k_prob(r);
  return 0;
}
void probe(int step) {
  int happy = find(" happy");
  int sad = find(" sa");
  printf("P(' happy') = %d.%02d%%  P(' sa') = %d.%02d%%\n", prob(happy) / 100, prob(happy) % 100,
         prob(sad) / 100, prob(sad) % 100);
}
int main() { hook_set("probe", 1); return 0; }
