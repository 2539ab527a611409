/* The cross-built C library's run check (scripts/dist-cross.sh): counts
 * "Hello, world!" for gpt-4o and fits a conversation file to 16000 tokens,
 * printing the count, the fitted conversation and the report, one per line.
 * dist-cross.sh builds it for each target against that target's tarball,
 * runs it (under qemu-user for AArch64) and compares the output byte for
 * byte with the same program built against this machine's library: the
 * target must not change a count or a fit.
 *
 *   usage: fit-agent-loop CONVERSATION.json
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "turnfit.h"

static int fail(turnfit_status st, turnfit_error *err) {
    fprintf(stderr, "%s: %s\n", turnfit_status_name(st), turnfit_error_message(err, NULL));
    turnfit_error_free(err);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s CONVERSATION.json\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    size_t cap = 1 << 16, len = 0, n;
    char *doc = malloc(cap);
    while (doc && (n = fread(doc + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) doc = realloc(doc, cap *= 2);
    }
    fclose(f);
    if (!doc) return 1;

    const char *model = "gpt-4o", *text = "Hello, world!";
    turnfit_tokenizer *tok = NULL;
    turnfit_error *err = NULL;
    turnfit_status st = turnfit_tokenizer_new_for_model(NULL, model, strlen(model), NULL, 0, 0, &tok, &err);
    if (st != TURNFIT_STATUS_OK) return fail(st, err);
    size_t count = 0;
    st = turnfit_tokenizer_count(tok, text, strlen(text), &count, &err);
    turnfit_tokenizer_free(tok);
    if (st != TURNFIT_STATUS_OK) return fail(st, err);

    const char *opts = "{\"model\":\"gpt-4o\",\"max_tokens\":16000}";
    turnfit_string conv = {NULL, 0}, report = {NULL, 0};
    st = turnfit_fit(NULL, doc, len, opts, strlen(opts), &conv, &report, &err);
    free(doc);
    if (st != TURNFIT_STATUS_OK) return fail(st, err);
    printf("count %zu\n%.*s\n%.*s\n", count, (int)conv.len, conv.ptr, (int)report.len, report.ptr);
    turnfit_string_free(&conv);
    turnfit_string_free(&report);
    return 0;
}
