#include <stdio.h>

#define N 200
double a[N][N], b[N][N], c[N][N];

int main() {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = (double)(i * N + j) / (N * N);
            b[i][j] = (double)((i + 2 * j) % N) / N - 0.5;
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < N; k++) s += a[i][k] * b[k][j];
            c[i][j] = s;
        }
    double trace = 0, total = 0;
    for (int i = 0; i < N; i++) {
        trace += c[i][i];
        for (int j = 0; j < N; j++) total += c[i][j];
    }
    printf("%.6f %.6f\n", trace, total);
    return 0;
}
