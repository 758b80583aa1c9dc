// Steers only while the model is unsure: at each step whose next-token entropy is above 2.5
// nats the control vector "happy" (given with --control-vector happy.gguf:0, loaded but not
// applied) is added at scale 2; otherwise it is removed. Each steered step is logged.
int v;
void steer(int step) {
  int h = vocab_entropy();
  if (h > 2500) {
    cvec_apply(v, 2000);
    printf("step %d: entropy %d mnats, steering\n", step, h);
  } else {
    cvec_clear();
  }
}
int main() {
  v = cvec_load("happy");
  hook_set("steer", 1000);
  return 0;
}
