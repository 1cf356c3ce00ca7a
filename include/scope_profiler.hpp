/* scope_profiler.hpp -- scope-profiler 0.7.5's C++ API over spanscope: RAII
 * scopes on the checked scope tokens of <scope_profiler.h>
 * (sp_profiler_scope_begin / sp_scope_end), C++11, header-only over
 * libspanscope (link it as for scope_profiler.h).
 *
 *     #include <scope_profiler.hpp>
 *
 *     sp_init("profile", rank);
 *     int solve = sp_region("solve");
 *     {
 *         sp::Scope timed(solve);          // ends on every exit path,
 *         solve_system();                  // a throw included
 *     }
 *     void step() { SP_PROFILE_FUNCTION(); ... }   // region named after the
 *                                                   // function, with its file:line
 *
 * sp::Scope(profiler, region) / sp::Scope(region) (the default profiler):
 *   begins region now, ends it when destroyed.  Move-only; a moved-from
 *   Scope ends nothing.  Must be destroyed on the thread that made it
 *   (the checked calls are per thread, see scope_profiler.h), before its
 *   profiler is destroyed.
 * sp::ProfileScope(name, file, line) / (profiler, name, file, line):
 *   registers name with its source location (sp_region_at, under the
 *   face's lock: the SP_PROFILE_* macros below do this on every pass) and
 *   scopes it.
 * SP_PROFILE_SCOPE(name), SP_PROFILE_SCOPE_CTX(profiler, name),
 * SP_PROFILE_FUNCTION(), SP_PROFILE_FUNCTION_CTX(profiler): the call-site
 *   macros; with SP_DISABLE_PROFILING they expand to nothing and evaluate
 *   nothing.
 * With SP_USE_LIKWID the scopes also drive LIKWID's marker API
 *   (<likwid-marker.h>); sp::LikwidSession owns its process-wide session and
 *   sp::likwid_thread_init() registers a worker thread.
 * SP_HEADER_ONLY (scope-profiler's C++17 inline backend) is accepted and
 *   changes nothing: the implementation is libspanscope's.
 *
 * Costs: a Scope is sp_profiler_scope_begin + sp_scope_end, a few ns more
 * than sps_begin + sps_end (the thread's stack of checked calls); for the
 * lowest cost in C++ use spanscope's SPS_REGION("name") (<spanscope.h>).
 */
#ifndef SCOPE_PROFILER_HPP
#define SCOPE_PROFILER_HPP

#include "scope_profiler.h"

#if defined(SP_USE_LIKWID) && !defined(SP_DISABLE_PROFILING)
#  include <likwid-marker.h>
#endif

namespace sp {

class Scope {
public:
    /* Enter `region` on `profiler` now; leave it when this Scope is
     * destroyed (or moved from). */
    Scope(sp_profiler *profiler, int region) noexcept
        : scope_(sp_profiler_scope_begin(profiler, region))
#if defined(SP_USE_LIKWID) && !defined(SP_DISABLE_PROFILING)
          , counter_name_(sp_profiler_region_name(profiler, region)),
          counter_active_(counter_name_ != 0)
#endif
    {
        counter_start();
    }

    /* Enter `region` on the default context - the one sp_init()/sp_region()/
     * sp_begin()/sp_end() operate on. */
    explicit Scope(int region) noexcept
        : scope_(sp_profiler_scope_begin(sp_default_profiler(), region))
#if defined(SP_USE_LIKWID) && !defined(SP_DISABLE_PROFILING)
          , counter_name_(sp_profiler_region_name(sp_default_profiler(), region)),
          counter_active_(counter_name_ != 0)
#endif
    {
        counter_start();
    }

    ~Scope()
    {
        counter_stop();
        sp_scope_end(&scope_);
    }

    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

    Scope(Scope &&other) noexcept
        : scope_(other.scope_)
#if defined(SP_USE_LIKWID) && !defined(SP_DISABLE_PROFILING)
          , counter_name_(other.counter_name_),
          counter_active_(other.counter_active_)
#endif
    {
        other.scope_.slot = -1;
#if defined(SP_USE_LIKWID) && !defined(SP_DISABLE_PROFILING)
        other.counter_active_ = false;
#endif
    }

    Scope &operator=(Scope &&other) noexcept
    {
        if (this != &other) {
            counter_stop();
            sp_scope_end(&scope_);
            scope_ = other.scope_;
            other.scope_.slot = -1;
#if defined(SP_USE_LIKWID) && !defined(SP_DISABLE_PROFILING)
            counter_name_ = other.counter_name_;
            counter_active_ = other.counter_active_;
            other.counter_active_ = false;
#endif
        }
        return *this;
    }

private:
    void counter_start() noexcept
    {
#if defined(SP_USE_LIKWID) && !defined(SP_DISABLE_PROFILING)
        if (counter_active_) {
            LIKWID_MARKER_START(counter_name_);
        }
#endif
    }

    void counter_stop() noexcept
    {
#if defined(SP_USE_LIKWID) && !defined(SP_DISABLE_PROFILING)
        if (counter_active_) {
            LIKWID_MARKER_STOP(counter_name_);
            counter_active_ = false;
        }
#endif
    }

    sp_scope scope_;
#if defined(SP_USE_LIKWID) && !defined(SP_DISABLE_PROFILING)
    const char *counter_name_;
    bool counter_active_;
#endif
};

/* Own LIKWID's process-wide marker session when native counter collection is
 * enabled. LIKWID itself decides whether counters are active (the executable
 * normally runs under `likwid-perfctr -m`). */
class LikwidSession {
public:
    LikwidSession() noexcept
    {
#if defined(SP_USE_LIKWID) && !defined(SP_DISABLE_PROFILING)
        LIKWID_MARKER_INIT;
        LIKWID_MARKER_THREADINIT;
#endif
    }

    ~LikwidSession()
    {
#if defined(SP_USE_LIKWID) && !defined(SP_DISABLE_PROFILING)
        LIKWID_MARKER_CLOSE;
#endif
    }

    LikwidSession(const LikwidSession &) = delete;
    LikwidSession &operator=(const LikwidSession &) = delete;
};

/* Register a worker thread with LIKWID before it enters marker scopes. It is
 * an inline no-op unless native LIKWID support is enabled. */
inline void likwid_thread_init() noexcept
{
#if defined(SP_USE_LIKWID) && !defined(SP_DISABLE_PROFILING)
    LIKWID_MARKER_THREADINIT;
#endif
}

/* The object emitted by SP_PROFILE_SCOPE*. It always records the native
 * timeline and, with SP_USE_LIKWID, wraps that same named region in LIKWID's
 * marker API. */
class ProfileScope {
public:
    ProfileScope(const char *name, const char *file, int line) noexcept
        : scope_(sp_default_profiler(), sp_region_at(name, file, line))
    {
    }

    ProfileScope(
        sp_profiler *profiler,
        const char *name,
        const char *file,
        int line) noexcept
        : scope_(profiler, sp_profiler_region_at(profiler, name, file, line))
    {
    }

    ~ProfileScope() = default;

    ProfileScope(const ProfileScope &) = delete;
    ProfileScope &operator=(const ProfileScope &) = delete;
    ProfileScope(ProfileScope &&) = delete;
    ProfileScope &operator=(ProfileScope &&) = delete;

private:
    Scope scope_;
};

} // namespace sp

#define SP_DETAIL_JOIN_INNER(a, b) a##b
#define SP_DETAIL_JOIN(a, b) SP_DETAIL_JOIN_INNER(a, b)

#if defined(_MSC_VER)
#  define SP_DETAIL_FUNCTION_NAME __FUNCSIG__
#elif defined(__GNUC__) || defined(__clang__)
#  define SP_DETAIL_FUNCTION_NAME __PRETTY_FUNCTION__
#else
#  define SP_DETAIL_FUNCTION_NAME __func__
#endif

/* These are deliberately the only recommended call-site macros. With
 * SP_DISABLE_PROFILING they do not evaluate their arguments, retain region
 * strings, instantiate objects, or reference the profiler ABI. */
#ifdef SP_DISABLE_PROFILING
#  define SP_PROFILE_SCOPE(name) ((void)0)
#  define SP_PROFILE_SCOPE_CTX(profiler, name) ((void)0)
#  define SP_PROFILE_FUNCTION() ((void)0)
#  define SP_PROFILE_FUNCTION_CTX(profiler) ((void)0)
#else
#  define SP_PROFILE_SCOPE(name) \
    ::sp::ProfileScope SP_DETAIL_JOIN(sp_profile_scope_, __LINE__)( \
        (name), __FILE__, __LINE__)
#  define SP_PROFILE_SCOPE_CTX(profiler, name) \
    ::sp::ProfileScope SP_DETAIL_JOIN(sp_profile_scope_, __LINE__)( \
        (profiler), (name), __FILE__, __LINE__)
#  define SP_PROFILE_FUNCTION() SP_PROFILE_SCOPE(SP_DETAIL_FUNCTION_NAME)
#  define SP_PROFILE_FUNCTION_CTX(profiler) \
    SP_PROFILE_SCOPE_CTX((profiler), SP_DETAIL_FUNCTION_NAME)
#endif

#endif /* SCOPE_PROFILER_HPP */
