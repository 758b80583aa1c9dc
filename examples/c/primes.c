// The primes below 100 and their count: a whole C program for `ruffian exec`.
#include <stdio.h>

int is_prime(int n) {
  if (n < 2) return 0;
  for (int d = 2; d * d <= n; d++)
    if (n % d == 0) return 0;
  return 1;
}

int main() {
  int count = 0;
  for (int n = 2; n < 100; n++) {
    if (is_prime(n)) {
      printf("%d ", n);
      count++;
    }
  }
  printf("\n%d primes below 100\n", count);
  return 0;
}
