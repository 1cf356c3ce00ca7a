/* prog.c -- the instrumented program of tests/instrument (run.sh builds it
 * with -finstrument-functions): recursion, calls through function
 * pointers, deep recursion, a static function, a shared library linked at build time
 * (libtlib.so) and one dlopen'ed (libtplug.so), a second thread, two
 * longjmp's out of instrumented functions, and functions a run-time
 * pattern leaves out.  Every count is fixed: run.sh checks each one.
 *
 *   prog PLUGIN_PATH
 */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>

int tlib_work(int n); /* libtlib.so */

/* fib(10): 177 calls; fib(5) on the thread: 15 more */
__attribute__((noinline)) int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

/* 5 calls each, through a table of pointers; apply 10 calls */
__attribute__((noinline)) int add1(int x) { return x + 1; }
__attribute__((noinline)) int mul2(int x) { return x * 2; }
__attribute__((noinline)) int apply(int (*volatile op)(int), int x) { return op(x); }

/* 1000 levels deep (the shadow stack grows): 1001 calls */
__attribute__((noinline)) int down(int n) { return n ? down(n - 1) + 1 : 0; }

/* static: only the executable's .symtab names it; 4 calls */
__attribute__((noinline)) static int helper(int x) { return x * 3 + 1; }

/* left out by SPANSCOPE_INSTRUMENT_EXCLUDE=skipme_*: 7 calls each */
__attribute__((noinline)) int skipme_a(int x) { return x ^ 5; }
__attribute__((noinline)) int skipme_b(int x) { return skipme_a(x) + 1; }

/* longjmp out of two levels, then another call: after() must be
 * jumper()'s child, not a child of the abandoned deep2() */
static jmp_buf jb;
__attribute__((noinline)) void deep2(void) { longjmp(jb, 1); }
__attribute__((noinline)) void deep1(void) { deep2(); }
__attribute__((noinline)) int after(void) { return 42; }
__attribute__((noinline)) int jumper(void) {
    if (!setjmp(jb)) deep1();
    return after();
}

/* longjmp out of two levels, then straight back: lj_top's exit ends them */
static jmp_buf jb2;
__attribute__((noinline)) void lj_inner(void) { longjmp(jb2, 1); }
__attribute__((noinline)) void lj_mid(void) { lj_inner(); }
__attribute__((noinline)) int lj_top(void) {
    if (!setjmp(jb2)) lj_mid();
    return 1;
}

__attribute__((noinline)) void *worker(void *arg) {
    int *out = arg;
    *out = fib(5);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: prog PLUGIN_PATH\n");
        return 2;
    }
    long sum = fib(10) + down(1000);
    int (*ops[2])(int) = {add1, mul2};
    for (int i = 0; i < 10; i++) sum += apply(ops[i % 2], i);
    for (int i = 0; i < 4; i++) sum += helper(i);
    for (int i = 0; i < 7; i++) sum += skipme_b(i);
    sum += tlib_work(3);
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "prog: %s\n", dlerror());
        return 1;
    }
    int (*plug_run)(int);
    void *sym = dlsym(h, "plug_run");
    *(void **)&plug_run = sym;
    if (!plug_run) return 1;
    sum += plug_run(2);
    sum += jumper();
    sum += lj_top();
    pthread_t th;
    int r = 0;
    if (pthread_create(&th, NULL, worker, &r) || pthread_join(th, NULL)) return 1;
    sum += r;
    printf("sum %ld\n", sum);
    return 0;
}
