/* test_version.c -- the version, at compile time (SPS_VERSION_NUMBER,
 * SPS_VERSION_AT_LEAST, SPS_VERSION_ENCODE) and at run time (sps_version,
 * sps_version_number): they agree with each other, with the header's parts
 * and with the CMake project's version (the build passes it in), and the
 * check macro orders versions by major, then minor, then patch. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#ifndef SPS_TEST_PROJECT_VERSION
#error "the build passes SPS_TEST_PROJECT_VERSION (CMake's PROJECT_VERSION)"
#endif

static void test_runtime_is_header(void **state) {
    (void)state;
    char parts[32];
    snprintf(parts, sizeof parts, "%d.%d.%d", SPS_VERSION_MAJOR, SPS_VERSION_MINOR,
             SPS_VERSION_PATCH);
    assert_string_equal(SPS_VERSION_STRING, parts);
    assert_string_equal(sps_version(), SPS_VERSION_STRING);
    assert_string_equal(sps_version(), SPS_TEST_PROJECT_VERSION);
    assert_int_equal(sps_version_number(), SPS_VERSION_NUMBER);
    assert_int_equal(SPS_VERSION_NUMBER, SPS_VERSION_MAJOR * 1000000L +
                                             SPS_VERSION_MINOR * 1000L + SPS_VERSION_PATCH);
}

static void test_encode_orders_versions(void **state) {
    (void)state;
    assert_int_equal(SPS_VERSION_ENCODE(0, 1, 0), 1000);
    assert_int_equal(SPS_VERSION_ENCODE(1, 2, 3), 1002003);
    /* a later patch, minor or major is larger, whatever the lower parts */
    assert_true(SPS_VERSION_ENCODE(0, 1, 1) > SPS_VERSION_ENCODE(0, 1, 0));
    assert_true(SPS_VERSION_ENCODE(0, 2, 0) > SPS_VERSION_ENCODE(0, 1, 999));
    assert_true(SPS_VERSION_ENCODE(1, 0, 0) > SPS_VERSION_ENCODE(0, 999, 999));
}

static void test_at_least(void **state) {
    (void)state;
    int maj = SPS_VERSION_MAJOR, min = SPS_VERSION_MINOR, pat = SPS_VERSION_PATCH;
    assert_true(SPS_VERSION_AT_LEAST(maj, min, pat));
    assert_true(SPS_VERSION_AT_LEAST(0, 0, 0));
    assert_false(SPS_VERSION_AT_LEAST(maj, min, pat + 1));
    assert_false(SPS_VERSION_AT_LEAST(maj, min + 1, 0));
    assert_false(SPS_VERSION_AT_LEAST(maj + 1, 0, 0));
    if (pat > 0) assert_true(SPS_VERSION_AT_LEAST(maj, min, pat - 1));
    if (min > 0) assert_true(SPS_VERSION_AT_LEAST(maj, min - 1, 999));
#if !SPS_VERSION_AT_LEAST(SPS_VERSION_MAJOR, SPS_VERSION_MINOR, SPS_VERSION_PATCH)
    fail_msg("SPS_VERSION_AT_LEAST is false in #if for the header's own version");
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runtime_is_header),
        cmocka_unit_test(test_encode_orders_versions),
        cmocka_unit_test(test_at_least),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
