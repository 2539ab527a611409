/* Oversized inputs through the C ABI, for scripts/limits.sh, which runs each
 * case under `ulimit -v`. A case builds its input in memory, calls one turnfit
 * function, checks the status, and prints one line:
 *
 *   <case> status=<NAME> input_bytes=<n> peak_rss_kib=<n> message=<text>
 *
 * Exit 0 when the status is the expected one, 1 otherwise. Built with plain
 * gcc (no sanitizers: ASan reserves terabytes of shadow address space, which
 * no `ulimit -v` leaves room for).
 *
 *   limits string <bytes>      turnfit_tokenizer_count on <bytes> of text
 *   limits string-at-limit     turnfit_tokenizer_count_until_limit on exactly 64 MiB
 *   limits deep <levels>       turnfit_fit on a conversation nested <levels> deep
 *                              (OK up to 127, the limit; LIMIT_EXCEEDED past it)
 *   limits messages <n>        turnfit_fit on <n> one-word user messages
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "turnfit.h"

static long peak_rss_kib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

static int report(const char *name, turnfit_status got, turnfit_status want, size_t input, turnfit_error *err)
{
    const char *msg = err ? turnfit_error_message(err, NULL) : "";
    printf("%s status=%s input_bytes=%zu peak_rss_kib=%ld message=%.300s\n", name, turnfit_status_name(got), input,
           peak_rss_kib(), msg);
    turnfit_error_free(err);
    if (got != want) {
        fprintf(stderr, "%s: expected %s\n", name, turnfit_status_name(want));
        return 1;
    }
    return 0;
}

/* Text of `n` bytes: "hello world " repeated. */
static char *text_of(size_t n)
{
    char *t = malloc(n ? n : 1);
    if (!t) {
        perror("malloc");
        exit(1);
    }
    static const char pat[] = "hello world ";
    for (size_t i = 0; i < n; i++)
        t[i] = pat[i % (sizeof pat - 1)];
    return t;
}

static turnfit_tokenizer *tokenizer(void)
{
    turnfit_tokenizer *t = NULL;
    turnfit_error *err = NULL;
    turnfit_status s = turnfit_tokenizer_new("cl100k_base", 11, 0, &t, &err);
    if (s != TURNFIT_STATUS_OK) {
        report("tokenizer_new", s, TURNFIT_STATUS_OK, 0, err);
        exit(1);
    }
    return t;
}

static int fit(const char *name, const char *conv, size_t len, turnfit_status want)
{
    static const char opts[] = "{\"model\":\"gpt-4o\"}";
    turnfit_string out_c = {0}, out_r = {0};
    turnfit_error *err = NULL;
    turnfit_status s = turnfit_fit(NULL, conv, len, opts, sizeof opts - 1, &out_c, &out_r, &err);
    turnfit_string_free(&out_c);
    turnfit_string_free(&out_r);
    return report(name, s, want, len, err);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: limits string <bytes> | string-at-limit | deep <levels> | messages <n>\n");
        return 2;
    }
    const char *mode = argv[1];
    size_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;

    if (strcmp(mode, "string") == 0) {
        turnfit_tokenizer *t = tokenizer();
        char *text = text_of(n);
        size_t count = 0;
        turnfit_error *err = NULL;
        turnfit_status s = turnfit_tokenizer_count(t, text, n, &count, &err);
        int rc = report("string", s, TURNFIT_STATUS_LIMIT_EXCEEDED, n, err);
        free(text);
        turnfit_tokenizer_free(t);
        return rc;
    }
    if (strcmp(mode, "string-at-limit") == 0) {
        /* At the limit the text is accepted; counting stops past 1,000
         * tokens, so this checks the limit, not tokenizer speed. */
        const size_t max = (size_t)64 * 1024 * 1024;
        turnfit_tokenizer *t = tokenizer();
        char *text = text_of(max);
        size_t count = 0;
        bool exceeded = false;
        turnfit_error *err = NULL;
        turnfit_status s = turnfit_tokenizer_count_until_limit(t, text, max, 1000, &count, &exceeded, &err);
        int rc = report("string-at-limit", s, TURNFIT_STATUS_OK, max, err);
        if (rc == 0 && !exceeded) {
            fprintf(stderr, "string-at-limit: expected the count to pass 1000\n");
            rc = 1;
        }
        free(text);
        turnfit_tokenizer_free(t);
        return rc;
    }
    if (strcmp(mode, "deep") == 0) {
        /* {"messages":[{"role":"user","content":"x","extra":[[[...]]]}]}:
         * the object, the array and the message are 3 of the levels. */
        static const char head[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\",\"extra\":";
        static const char tail[] = "}]}";
        turnfit_status want = n > 127 ? TURNFIT_STATUS_LIMIT_EXCEEDED : TURNFIT_STATUS_OK;
        n = n < 3 ? 0 : n - 3;
        size_t len = (sizeof head - 1) + 2 * n + (sizeof tail - 1);
        char *doc = malloc(len);
        if (!doc)
            return 1;
        char *p = doc;
        memcpy(p, head, sizeof head - 1);
        p += sizeof head - 1;
        memset(p, '[', n);
        memset(p + n, ']', n);
        p += 2 * n;
        memcpy(p, tail, sizeof tail - 1);
        int rc = fit("deep", doc, len, want);
        free(doc);
        return rc;
    }
    if (strcmp(mode, "messages") == 0) {
        static const char one[] = "{\"role\":\"user\",\"content\":\"x\"}";
        const size_t m = sizeof one - 1;
        size_t len = 2 + n * (m + 1);
        char *doc = malloc(len);
        if (!doc)
            return 1;
        char *p = doc;
        *p++ = '[';
        for (size_t i = 0; i < n; i++) {
            if (i)
                *p++ = ',';
            memcpy(p, one, m);
            p += m;
        }
        *p++ = ']';
        turnfit_status want = n > 100000 ? TURNFIT_STATUS_LIMIT_EXCEEDED : TURNFIT_STATUS_OK;
        int rc = fit("messages", doc, (size_t)(p - doc), want);
        free(doc);
        return rc;
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
