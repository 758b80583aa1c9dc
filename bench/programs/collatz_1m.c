#include <stdio.h>

int main() {
    int best = 1, best_len = 1;
    for (int start = 1; start < 1000000; start++) {
        long n = start;
        int len = 1;
        while (n != 1) {
            n = (n & 1) ? 3 * n + 1 : n >> 1;
            len++;
        }
        if (len > best_len) { best_len = len; best = start; }
    }
    printf("%d %d\n", best, best_len);
    return 0;
}
