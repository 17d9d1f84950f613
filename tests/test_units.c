/* Units, dtypes and the roofline primitives. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "roofline.h"
#include "units.h"

Test(units, dtype_bytes_are_the_storage_sizes)
{
    /* fp32 4 B, bf16/fp16 2 B, fp8/int8 1 B, int4 half a byte */
    cr_assert_eq(dtype_bytes(DT_FP32), 4.0);
    cr_assert_eq(dtype_bytes(DT_BF16), 2.0);
    cr_assert_eq(dtype_bytes(DT_FP16), 2.0);
    cr_assert_eq(dtype_bytes(DT_FP8), 1.0);
    cr_assert_eq(dtype_bytes(DT_INT8), 1.0);
    cr_assert_eq(dtype_bytes(DT_INT4), 0.5);
}

Test(units, dtype_parse_accepts_names_and_rejects_others)
{
    dtype d;
    cr_assert_eq(dtype_parse("bf16", &d), 0);
    cr_assert_eq(d, DT_BF16);
    cr_assert_eq(dtype_parse("INT8", &d), 0);
    cr_assert_eq(d, DT_INT8);
    cr_assert_eq(dtype_parse("bf17", &d), -1);
    cr_assert_eq(dtype_parse("", &d), -1);
    cr_assert_eq(dtype_parse(NULL, &d), -1);
    cr_assert(strstr(dtype_choices(), "fp8") != NULL);
}

Test(units, formatting_for_people)
{
    char b[64];
    /* 327,680 B = 320 * 1024 B: the LLaMA-3-70B KV per token */
    cr_assert_str_eq(fmt_bytes_iec(327680, b, sizeof b), "320 KiB");
    cr_assert_str_eq(fmt_bytes(141e9, b, sizeof b), "141 GB");
    cr_assert_str_eq(fmt_bytes(512, b, sizeof b), "512 B");
    cr_assert_str_eq(fmt_seconds(0.0123, b, sizeof b), "12.3 ms");
    cr_assert_str_eq(fmt_seconds(4.5e-6, b, sizeof b), "4.50 µs");
    cr_assert_str_eq(fmt_seconds(2.25, b, sizeof b), "2.25 s");
    cr_assert_str_eq(fmt_flops(989.4e12, b, sizeof b), "989 TFLOP/s");
    cr_assert_str_eq(fmt_bandwidth(3.35e12, b, sizeof b), "3.35 TB/s");
    cr_assert_str_eq(fmt_count(1.5e6, b, sizeof b), "1.50 M");
    cr_assert_str_eq(fmt_count(42, b, sizeof b), "42");
}

Test(roofline, ridge_of_h100_is_295)
{
    /* 989.4 TFLOP/s dense bf16 over 3.35 TB/s = 295.34 FLOP/byte (REFERENCE: 295) */
    cr_assert_float_eq(ridge_intensity(989.4e12, 3.35e12), 295.34, 0.01);
    /* H200: 989.4 / 4.8 = 206.125 */
    cr_assert_float_eq(ridge_intensity(989.4e12, 4.8e12), 206.125, 1e-9);
}

Test(roofline, time_is_the_larger_term)
{
    bound_kind b;
    /* 1e12 FLOP at 1e15 FLOP/s = 1 ms; 4e9 B at 1e12 B/s = 4 ms: memory-bound */
    cr_assert_float_eq(roofline_time(1e12, 4e9, 1e15, 1e12, &b), 4e-3, 1e-15);
    cr_assert_eq(b, BOUND_MEMORY);
    /* 8e12 FLOP = 8 ms against 4 ms of bytes: compute-bound */
    cr_assert_float_eq(roofline_time(8e12, 4e9, 1e15, 1e12, &b), 8e-3, 1e-15);
    cr_assert_eq(b, BOUND_COMPUTE);
    cr_assert_str_eq(bound_name(BOUND_COMPUTE), "compute");
}

Test(roofline, attainable_flops_bends_at_the_ridge)
{
    /* below the ridge: intensity * bandwidth; above: the peak */
    cr_assert_float_eq(attainable_flops(10, 989.4e12, 3.35e12), 33.5e12, 1e3);
    cr_assert_float_eq(attainable_flops(1000, 989.4e12, 3.35e12), 989.4e12, 1e3);
    cr_assert_float_eq(arithmetic_intensity(2e9, 1e9), 2.0, 1e-12);
}
