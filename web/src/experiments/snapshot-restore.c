// Snapshot and restore: a logit is halved by temperature 2.0 and comes back exactly.
void round_trip(int step) {
  int top = logit_argmax();
  logit_snapshot(0);
  int v1 = logit_get(top);
  logit_temperature(2000);
  int v2 = logit_get(top);
  logit_restore(0);
  int v3 = logit_get(top);
  printf("v1=%d v2=%d v3=%d ok=%d", v1, v2, v3, v1 == v3);
}

int main() {
  hook_set("round_trip", 3);
  return 0;
}
