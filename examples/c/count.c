/* Count tokens from C: the smallest complete ctxkit program.
 *
 * Build (from the repository root, after `cargo build -p ctxkit-ffi`):
 *   cc -std=c11 -Iinclude examples/c/count.c -Ltarget/debug -lctxkit \
 *      -Wl,-rpath,"$PWD/target/debug" -o count && ./count "Hello, world!"
 */
#include <stdio.h>
#include <string.h>

#include "ctxkit.h"

int main(int argc, char **argv) {
    const char *text = argc > 1 ? argv[1] : "Hello, world!";
    const char *model = "gpt-4o";
    ctxkit_tokenizer *tok = NULL;
    ctxkit_error *err = NULL;

    ctxkit_status st = ctxkit_tokenizer_new_for_model(
        NULL, model, strlen(model), NULL, 0, 0, &tok, &err);
    if (st != CTXKIT_STATUS_OK) {
        fprintf(stderr, "%s: %s\n", ctxkit_status_name(st), ctxkit_error_message(err, NULL));
        ctxkit_error_free(err);
        return 1;
    }

    size_t count = 0;
    st = ctxkit_tokenizer_count(tok, text, strlen(text), &count, &err);
    if (st != CTXKIT_STATUS_OK) {
        fprintf(stderr, "%s: %s\n", ctxkit_status_name(st), ctxkit_error_message(err, NULL));
        ctxkit_error_free(err);
        ctxkit_tokenizer_free(tok);
        return 1;
    }
    printf("%zu tokens for %s (ctxkit %s)\n", count, model, ctxkit_version());
    ctxkit_tokenizer_free(tok);
    return 0;
}
