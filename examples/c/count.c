/* Count tokens from C: the smallest complete turnfit program.
 *
 * Build (from the repository root, after `cargo build -p turnfit-ffi`):
 *   cc -std=c11 -Iinclude examples/c/count.c -Ltarget/debug -lturnfit \
 *      -Wl,-rpath,"$PWD/target/debug" -o count && ./count "Hello, world!"
 */
#include <stdio.h>
#include <string.h>

#include "turnfit.h"

int main(int argc, char **argv) {
    const char *text = argc > 1 ? argv[1] : "Hello, world!";
    const char *model = "gpt-4o";
    turnfit_tokenizer *tok = NULL;
    turnfit_error *err = NULL;

    turnfit_status st = turnfit_tokenizer_new_for_model(
        NULL, model, strlen(model), NULL, 0, 0, &tok, &err);
    if (st != TURNFIT_STATUS_OK) {
        fprintf(stderr, "%s: %s\n", turnfit_status_name(st), turnfit_error_message(err, NULL));
        turnfit_error_free(err);
        return 1;
    }

    size_t count = 0;
    st = turnfit_tokenizer_count(tok, text, strlen(text), &count, &err);
    if (st != TURNFIT_STATUS_OK) {
        fprintf(stderr, "%s: %s\n", turnfit_status_name(st), turnfit_error_message(err, NULL));
        turnfit_error_free(err);
        turnfit_tokenizer_free(tok);
        return 1;
    }
    printf("%zu tokens for %s (turnfit %s)\n", count, model, turnfit_version());
    turnfit_tokenizer_free(tok);
    return 0;
}
