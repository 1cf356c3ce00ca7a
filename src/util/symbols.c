/* symbols.c -- names of native code addresses: the object an address lies
 * in (dl_iterate_phdr), its function from the object's ELF symbol table
 * (.symtab, else .dynsym: static and hidden functions too; read once per
 * object and kept), or dladdr's exported name, C++ names demangled with
 * __cxa_demangle when the process has a C++ runtime (looked up with dlsym:
 * nothing here needs C++).  Shared by libspanscope_instrument (a region per
 * function, named at its first call) and the sampler (names at finalize).
 *
 * Source lines (sps__sym_line) come from the objects' DWARF through
 * elfutils' libdw, loaded at the first need with dlopen (Debian's libdw1;
 * without it, or for an object built without -g, there are none): one
 * Dwfl over this process's mappings, kept.
 *
 * Not for signal handlers: it takes the loader's lock (dl_iterate_phdr,
 * dladdr) and a lock of its own, and allocates.  Every file offset is
 * checked against the file: a hostile or truncated object gives no names.
 */
#include "util/util.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct fsym {
    uintptr_t lo, size; /* link-time address and size */
    const char *name;   /* into the object's mapping */
    int local;
} fsym_t;

/* One object's function symbols, read once and kept. */
typedef struct objsyms {
    uintptr_t bias;   /* load bias (dl_phdr_info.dlpi_addr) */
    char *path;
    fsym_t *v;
    size_t n;
    struct objsyms *next;
} objsyms_t;

static objsyms_t *g_objs;
static pthread_mutex_t g_objs_lock = PTHREAD_MUTEX_INITIALIZER;

static int fsym_cmp(const void *a, const void *b) {
    const fsym_t *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return x->local - y->local; /* global names first at one address */
}

/* Reads the function symbols of the ELF file at path: .symtab when it has
 * one, else .dynsym.  Every offset and size is checked against the file.
 * The mapping stays (the names point into it); on any failure the object
 * simply has no symbols. */
static void elf_load(objsyms_t *o) {
    int fd = open(o->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(Elf64_Ehdr)) {
        close(fd);
        return;
    }
    size_t len = (size_t)st.st_size;
    const unsigned char *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
    int ok = memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
             eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shoff > 0 && eh->e_shoff < len &&
             eh->e_shoff % sizeof(Elf64_Addr) == 0 &&
             eh->e_shnum <= (len - eh->e_shoff) / sizeof(Elf64_Shdr);
    const Elf64_Shdr *sh = ok ? (const Elf64_Shdr *)(m + eh->e_shoff) : NULL;
    const Elf64_Shdr *tab = NULL;
    for (size_t i = 0; ok && i < eh->e_shnum; i++) /* .symtab: every function */
        if (sh[i].sh_type == SHT_SYMTAB) tab = &sh[i];
    for (size_t i = 0; ok && !tab && i < eh->e_shnum; i++) /* stripped: the exported */
        if (sh[i].sh_type == SHT_DYNSYM) tab = &sh[i];
    if (tab && (tab->sh_link >= eh->e_shnum || tab->sh_entsize != sizeof(Elf64_Sym) ||
                tab->sh_offset % sizeof(Elf64_Addr) != 0 ||
                tab->sh_offset > len || tab->sh_size > len - tab->sh_offset))
        tab = NULL;
    const Elf64_Shdr *str = tab ? &sh[tab->sh_link] : NULL;
    if (str && (str->sh_offset > len || str->sh_size > len - str->sh_offset || !str->sh_size))
        tab = NULL;
    if (!tab) {
        munmap((void *)m, len);
        return;
    }
    const Elf64_Sym *sym = (const Elf64_Sym *)(m + tab->sh_offset);
    size_t nsym = tab->sh_size / sizeof *sym;
    const char *strs = (const char *)(m + str->sh_offset);
    size_t nstr = str->sh_size;
    fsym_t *v = malloc((nsym ? nsym : 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; v && i < nsym; i++) {
        unsigned type = ELF64_ST_TYPE(sym[i].st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym[i].st_shndx == SHN_UNDEF ||
            sym[i].st_name == 0 || sym[i].st_name >= nstr)
            continue;
        /* the name must end inside the table */
        if (!memchr(strs + sym[i].st_name, 0, nstr - sym[i].st_name)) continue;
        v[n++] = (fsym_t){(uintptr_t)sym[i].st_value, (uintptr_t)sym[i].st_size,
                          strs + sym[i].st_name, ELF64_ST_BIND(sym[i].st_info) == STB_LOCAL};
    }
    if (!n) {
        free(v);
        munmap((void *)m, len);
        return;
    }
    qsort(v, n, sizeof *v, fsym_cmp);
    o->v = v;
    o->n = n;
}

/* The function symbol of o containing link-time address off, or NULL. */
static const char *objsyms_find(const objsyms_t *o, uintptr_t off) {
    size_t lo = 0, hi = o->n; /* first entry with v.lo > off */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->v[mid].lo <= off) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return NULL;
    size_t k = lo - 1;
    while (k > 0 && o->v[k - 1].lo == o->v[k].lo) k--; /* the global one */
    const fsym_t *s = &o->v[k];
    return off == s->lo || off - s->lo < s->size ? s->name : NULL;
}

/* The loaded object containing an address: its bias and file name. */
typedef struct objfind {
    uintptr_t addr, bias;
    const char *name;
    int found;
} objfind_t;

static int objfind_cb(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    objfind_t *f = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_LOAD) continue;
        uintptr_t lo = (uintptr_t)info->dlpi_addr + (uintptr_t)p->p_vaddr;
        if (f->addr >= lo && f->addr - lo < (uintptr_t)p->p_memsz) {
            f->bias = (uintptr_t)info->dlpi_addr;
            f->name = info->dlpi_name;
            f->found = 1;
            return 1;
        }
    }
    return 0;
}

/* The symbols of the object with this bias and path, read at the first
 * need.  Returns NULL when out of memory. */
static objsyms_t *objsyms_get(uintptr_t bias, const char *path) {
    pthread_mutex_lock(&g_objs_lock);
    objsyms_t *o = g_objs;
    while (o && (o->bias != bias || strcmp(o->path, path) != 0)) o = o->next;
    if (!o && (o = calloc(1, sizeof *o)) != NULL) {
        o->bias = bias;
        o->path = strdup(path);
        if (!o->path) {
            free(o);
            o = NULL;
        } else {
            elf_load(o); /* file I/O only: no lock of the loader under ours */
            o->next = g_objs;
            g_objs = o;
        }
    }
    pthread_mutex_unlock(&g_objs_lock);
    return o;
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* __cxa_demangle when the process has libstdc++ (or another C++ ABI
 * library), else NULL; looked up at each need until found, since a
 * library loaded later may bring it. */
static demangle_fn demangler(void) {
    static demangle_fn fn;
    demangle_fn f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);
    if (!f) {
        void *p = dlsym(RTLD_DEFAULT, "__cxa_demangle");
        memcpy(&f, &p, sizeof f);
        if (f) __atomic_store_n(&fn, f, __ATOMIC_RELEASE);
    }
    return f;
}


static char g_exe[4096];
static pthread_once_t g_exe_once = PTHREAD_ONCE_INIT;

static void exe_init(void) {
    ssize_t l = readlink("/proc/self/exe", g_exe, sizeof g_exe - 1);
    if (l > 0) g_exe[l] = 0;
    else strcpy(g_exe, "/proc/self/exe");
}

/* Copies s into buf[0..cap) (truncated, NUL-terminated; cap 0: nothing). */
static void put(char *buf, size_t cap, const char *s) {
    if (!buf || !cap) return;
    size_t n = strlen(s);
    if (n >= cap) n = cap - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
}

int sps__sym_name(uintptr_t a, int exact, char *func, size_t fcap, char *obj, size_t ocap,
                  uintptr_t *off) {
    pthread_once(&g_exe_once, exe_init);
    char buf[512];
    const char *name = NULL;
    void *fn;
    memcpy(&fn, &a, sizeof fn);
    /* the object: its load bias and file (the main program's from /proc) */
    objfind_t f = {a, 0, NULL, 0};
    dl_iterate_phdr(objfind_cb, &f);
    const char *path = !f.found ? "" : f.name && *f.name ? f.name : g_exe;
    /* an exported symbol starting exactly here: dladdr knows it */
    Dl_info di;
    memset(&di, 0, sizeof di);
    if (dladdr(fn, &di) && di.dli_sname && (uintptr_t)di.dli_saddr == a) name = di.dli_sname;
    if (!name && f.found) { /* a static or hidden one, or inside one: the symbol table */
        objsyms_t *o = objsyms_get(f.bias, path);
        if (o) name = objsyms_find(o, a - f.bias);
    }
    (void)exact; /* the symbol table's functions contain their entries too */
    int named = name != NULL;
    if (!name) { /* stripped: the object and the offset */
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        if (*base) snprintf(buf, sizeof buf, "%.400s+0x%lx", base, (unsigned long)(a - f.bias));
        else snprintf(buf, sizeof buf, "0x%lx", (unsigned long)a);
        name = buf;
    }
    char *dem = NULL;
    if (name[0] == '_' && name[1] == 'Z') {
        demangle_fn d = demangler();
        int st = -1;
        if (d) dem = d(name, NULL, NULL, &st);
        if (dem && st == 0) name = dem;
    }
    put(func, fcap, name);
    put(obj, ocap, path);
    if (off) *off = f.found ? a - f.bias : a;
    free(dem);
    return named;
}

/* ---- source lines: libdw's Dwfl, declared here (no build dependency) ---- */

/* libdwfl.h's types and the calls used, as elfutils 0.188 declares them
 * (stable since 0.1xx): Dwfl_Callbacks is four pointers. */
typedef struct dwfl dwfl_t;
typedef struct dwfl_module dwfl_module_t;
typedef struct dwfl_line dwfl_line_t;
typedef struct dwfl_callbacks {
    void *find_elf, *find_debuginfo, *section_address;
    char **debuginfo_path;
} dwfl_callbacks_t;

static struct {
    dwfl_t *(*begin)(const dwfl_callbacks_t *);
    int (*proc_report)(dwfl_t *, pid_t);
    int (*report_end)(dwfl_t *, void *, void *);
    dwfl_module_t *(*addrmodule)(dwfl_t *, uint64_t);
    dwfl_line_t *(*getsrc)(dwfl_module_t *, uint64_t);
    const char *(*lineinfo)(dwfl_line_t *, uint64_t *, int *, int *, uint64_t *, uint64_t *);
    dwfl_callbacks_t cb;
    dwfl_t *dwfl;
    int tried;
} g_dw;
static pthread_mutex_t g_dw_lock = PTHREAD_MUTEX_INITIALIZER;

/* Under g_dw_lock: loads libdw and reports this process's mappings, once;
 * 0 or -1 (no libdw: no lines). */
static int dw_open(void) {
    if (g_dw.tried) return g_dw.dwfl ? 0 : -1;
    g_dw.tried = 1;
    void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return -1;
    void *f[9] = {dlsym(h, "dwfl_begin"), dlsym(h, "dwfl_linux_proc_report"),
                  dlsym(h, "dwfl_report_end"), dlsym(h, "dwfl_addrmodule"),
                  dlsym(h, "dwfl_module_getsrc"), dlsym(h, "dwfl_lineinfo"),
                  dlsym(h, "dwfl_linux_proc_find_elf"), dlsym(h, "dwfl_standard_find_debuginfo"),
                  dlsym(h, "dwfl_end")};
    for (int i = 0; i < 9; i++)
        if (!f[i]) return -1;
    memcpy(&g_dw.begin, &f[0], sizeof f[0]);
    memcpy(&g_dw.proc_report, &f[1], sizeof f[1]);
    memcpy(&g_dw.report_end, &f[2], sizeof f[2]);
    memcpy(&g_dw.addrmodule, &f[3], sizeof f[3]);
    memcpy(&g_dw.getsrc, &f[4], sizeof f[4]);
    memcpy(&g_dw.lineinfo, &f[5], sizeof f[5]);
    g_dw.cb.find_elf = f[6];
    g_dw.cb.find_debuginfo = f[7];
    dwfl_t *d = g_dw.begin(&g_dw.cb);
    if (!d) return -1;
    if (g_dw.proc_report(d, getpid()) != 0 || g_dw.report_end(d, NULL, NULL) != 0) {
        void (*end)(dwfl_t *);
        memcpy(&end, &f[8], sizeof f[8]);
        end(d);
        return -1;
    }
    g_dw.dwfl = d; /* kept: the process's objects, read as needed */
    return 0;
}

int sps__sym_line(uintptr_t a, char *file, size_t fcap, int64_t *line) {
    if (line) *line = 0;
    put(file, fcap, "");
    pthread_mutex_lock(&g_dw_lock);
    int rc = -1;
    if (dw_open() == 0) {
        dwfl_module_t *m = g_dw.addrmodule(g_dw.dwfl, (uint64_t)a);
        dwfl_line_t *l = m ? g_dw.getsrc(m, (uint64_t)a) : NULL;
        int ln = 0;
        const char *src = l ? g_dw.lineinfo(l, NULL, &ln, NULL, NULL, NULL) : NULL;
        if (src && ln > 0) {
            put(file, fcap, src);
            if (line) *line = ln;
            rc = 0;
        }
    }
    pthread_mutex_unlock(&g_dw_lock);
    return rc;
}
