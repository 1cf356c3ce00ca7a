/* tplug.c -- libtplug.so of tests/instrument, dlopen'ed by prog:
 * plug_run(n) calls plug_step n times. */
__attribute__((noinline)) int plug_step(int i) { return i + 7; }

int plug_run(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += plug_step(i);
    return s;
}
