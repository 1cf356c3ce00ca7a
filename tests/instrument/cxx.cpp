// cxx.cpp -- the C++ program of tests/instrument: a const method, a
// template and a static member, whose names come back demangled, and an
// exception thrown through two instrumented functions (their exits are
// skipped or not, as the compiler does it: the counts and the parents
// come out the same).
#include <cstdio>
#include <stdexcept>

namespace ns {
struct Shape {
    int w, h;
    __attribute__((noinline)) int area() const { return w * h; }
    __attribute__((noinline)) static int unit() { return 1; }
};
template <typename T> __attribute__((noinline)) T twice(T x) { return x + x; }
} // namespace ns

__attribute__((noinline)) void thrower(int x) {
    if (x >= 0) throw std::runtime_error("thrown");
}
__attribute__((noinline)) void mid(int x) { thrower(x); }
__attribute__((noinline)) int after() { return 1; }
__attribute__((noinline)) int top() {
    int s = 0;
    try {
        mid(1);
    } catch (const std::exception &) {
        s++;
    }
    return s + after();
}

int main() {
    ns::Shape s{3, 4};
    int sum = 0;
    for (int i = 0; i < 3; i++) sum += s.area();
    for (int i = 0; i < 2; i++) sum += ns::twice<int>(i);
    sum += ns::Shape::unit();
    for (int i = 0; i < 3; i++) sum += top();
    std::printf("sum %d\n", sum);
    return 0;
}
