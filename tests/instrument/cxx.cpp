// cxx.cpp -- the C++ program of tests/instrument: a const method, a
// template and a static member, whose names come back demangled.
#include <cstdio>

namespace ns {
struct Shape {
    int w, h;
    __attribute__((noinline)) int area() const { return w * h; }
    __attribute__((noinline)) static int unit() { return 1; }
};
template <typename T> __attribute__((noinline)) T twice(T x) { return x + x; }
} // namespace ns

int main() {
    ns::Shape s{3, 4};
    int sum = 0;
    for (int i = 0; i < 3; i++) sum += s.area();
    for (int i = 0; i < 2; i++) sum += ns::twice<int>(i);
    sum += ns::Shape::unit();
    std::printf("sum %d\n", sum);
    return 0;
}
