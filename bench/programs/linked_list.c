#include <stdio.h>
#include <stdlib.h>

struct node { long value; struct node *next; };

int main() {
    struct node *head = NULL;
    for (long i = 0; i < 1000000; i++) {
        struct node *n = malloc(sizeof(struct node));
        n->value = i * 7 % 1000003;
        n->next = head;
        head = n;
    }
    struct node *prev = NULL;
    while (head) {
        struct node *next = head->next;
        head->next = prev;
        prev = head;
        head = next;
    }
    head = prev;
    long sum = 0, count = 0;
    for (struct node *p = head; p; p = p->next) { sum += p->value; count++; }
    while (head) {
        struct node *next = head->next;
        free(head);
        head = next;
    }
    printf("%ld %ld\n", count, sum);
    return 0;
}
