#include <stdio.h>
#include <stdlib.h>

int main() {
    int limit = 2000000;
    char *composite = calloc(limit, 1);
    long sum = 0;
    for (int i = 2; i < limit; i++) {
        if (composite[i]) continue;
        sum += i;
        for (long j = (long)i * i; j < limit; j += i) composite[j] = 1;
    }
    printf("%ld\n", sum);
    free(composite);
    return 0;
}
