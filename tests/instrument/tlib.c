/* tlib.c -- libtlib.so of tests/instrument, linked into prog at build
 * time and built with -finstrument-functions: an exported function (named
 * by dladdr) and a static one (named by the library's .symtab). */
__attribute__((noinline)) static int tlib_inner(int i) { return i * i; }

int tlib_work(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += tlib_inner(i);
    return s;
}
