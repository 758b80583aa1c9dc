#include <stdio.h>
#include <string.h>

#define COUNT 3000
#define LEN 10
char words[COUNT][LEN + 1];
char *order[COUNT];

int main() {
    unsigned int seed = 2026;
    for (int i = 0; i < COUNT; i++) {
        for (int k = 0; k < LEN; k++) {
            seed = seed * 1103515245u + 12345u;
            words[i][k] = 'a' + (seed >> 16) % 26;
        }
        words[i][LEN] = '\0';
        order[i] = words[i];
    }
    for (int i = 1; i < COUNT; i++) {
        char *key = order[i];
        int j = i - 1;
        while (j >= 0 && strcmp(order[j], key) > 0) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = key;
    }
    unsigned int hash = 0;
    for (int i = 0; i < COUNT; i++)
        for (int k = 0; k < LEN; k++) hash = hash * 31 + (unsigned char)order[i][k];
    printf("%s %s %u\n", order[0], order[COUNT - 1], hash);
    return 0;
}
