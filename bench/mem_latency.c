/* The cost of one dependent load by the size of the memory it is spread over
 * (docs/benchmarks.md, issue 36: why the unique-prose rows wait on memory).
 * A pointer chase through every cache line of a buffer in a random order, so
 * neither the prefetchers nor out-of-order execution hide the latency.
 *
 *   gcc -O2 -o target/mem_latency bench/mem_latency.c && target/mem_latency
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(void) {
    const size_t sizes[] = {32u << 10, 256u << 10, 1u << 20, 4u << 20, 8u << 20, 16u << 20, 64u << 20};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t lines = sizes[s] / 64, *buf = malloc(sizes[s]), *order = malloc(lines * sizeof *order);
        if (!buf || !order) return 1;
        for (size_t i = 0; i < lines; i++) order[i] = i;
        srand(1);
        for (size_t i = lines - 1; i > 0; i--) {
            size_t j = ((size_t)rand() * RAND_MAX + (size_t)rand()) % (i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        /* One cycle through every line: line order[i] points to order[i + 1]. */
        for (size_t i = 0; i < lines; i++) buf[order[i] * 8] = order[(i + 1) % lines] * 8;
        size_t p = 0;
        for (size_t i = 0; i < 2 * lines; i++) p = buf[p];
        const size_t steps = 20000000;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (size_t i = 0; i < steps; i++) p = buf[p];
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)steps;
        printf("%8zu KiB: %5.1f ns per load%s\n", sizes[s] >> 10, ns, p == 1 ? " " : "");
        free(buf);
        free(order);
    }
    return 0;
}
