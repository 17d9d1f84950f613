/* The pricing door (pricing.h): the op kinds with no measured rates (a
 * point-to-point transfer, a host load, a bare HBM read, the all-to-all)
 * against hand arithmetic, the roofline's two terms, and a calibrated row
 * pricing those kinds exactly as the roofline does. */
#include "pricing.h"
#include "rate_table.h"

#include <criterion/criterion.h>
#include <math.h>

/* The built-in H100 row (code/specs/gpus.tsv): 3.35 TB/s HBM, 450 GB/s
 * NVLink per direction, 4.8 us per small collective, 64 GB/s PCIe. */

Test(price_op, p2p_on_its_own_link_by_hand)
{
    /* 1 GB over a 50 GB/s link that takes 5 us to start: 5e-6 + 1e9 / 50e9 = 0.020005 s */
    gpu_spec g = gpu_builtin("h100");
    op_cost op = {.name = "kv", .kind = OP_P2P, .comm_bytes = 1e9, .link_bw = 50e9, .link_latency = 5e-6};
    cr_assert_float_eq(price_op(&op, &g, 0, 1, NULL), 0.020005, 1e-15);
    /* a link of its own with no start-up cost keeps its 0: 1e9 / 50e9 = 0.02 s, not the row's 4.8 us more */
    op.link_latency = 0;
    cr_assert_float_eq(price_op(&op, &g, 0, 1, NULL), 0.02, 1e-15);
}

Test(price_op, p2p_on_the_rows_link_by_hand)
{
    /* no link of its own: the row's, 4.8e-6 + 9e8 / 450e9 = 4.8e-6 + 2e-3 = 2.0048e-3 s */
    gpu_spec g = gpu_builtin("h100");
    op_cost op = {.name = "hand_off", .kind = OP_P2P, .comm_bytes = 9e8};
    cr_assert_float_eq(price_op(&op, &g, 0, 1, NULL), 2.0048e-3, 1e-15);
    /* a row without link figures cannot price it: NAN, not a free transfer */
    g.link_bw = 0;
    cr_assert(isnan(price_op(&op, &g, 0, 1, NULL)));
}

Test(price_op, host_load_by_hand)
{
    /* 1.28 GB of adapter weights over 64 GB/s of PCIe: 1.28e9 / 64e9 = 0.02 s */
    gpu_spec g = gpu_builtin("h100");
    op_cost op = {.name = "adapter", .kind = OP_HOST_LOAD, .comm_bytes = 1.28e9};
    cr_assert_float_eq(price_op(&op, &g, 0, 1, NULL), 0.02, 1e-15);
    g.host_bw = 0; /* a row without a host link */
    cr_assert(isnan(price_op(&op, &g, 0, 1, NULL)));
}

Test(price_op, hbm_read_by_hand)
{
    /* 6.7 GB of weights at 3.35 TB/s: 6.7e9 / 3.35e12 = 2e-3 s; bytes off the GPU (comm_bytes)
     * are no HBM traffic and change nothing */
    gpu_spec g = gpu_builtin("h100");
    op_cost op = {.name = "weights", .kind = OP_HBM_READ, .weight_bytes = 6.7e9, .comm_bytes = 1e12};
    cr_assert_float_eq(price_op(&op, &g, gpu_peak_flops(&g, DT_BF16), 1, NULL), 2e-3, 1e-15);
    /* KV and activations read count like weights: 3.35e9 + 3.35e9 = 6.7e9 B, the same 2 ms */
    op_cost mixed = {.name = "mixed", .kind = OP_HBM_READ, .kv_bytes = 3.35e9, .act_bytes = 3.35e9};
    cr_assert_float_eq(price_op(&mixed, &g, 0, 1, NULL), 2e-3, 1e-15);
}

Test(price_op, alltoall_by_hand)
{
    /* 9e8 B sent, all inside the node: 4.8e-6 + 9e8 / 450e9 = 2.0048e-3 s */
    gpu_spec g = gpu_builtin("h100");
    op_cost op = {.name = "dispatch", .kind = OP_ALLTOALL, .comm_bytes = 9e8, .comm_intra_share = 1,
                  .comm_net_bw = 50e9};
    cr_assert_float_eq(price_op(&op, &g, 0, 8, NULL), 2.0048e-3, 1e-15);
    /* half across nodes at 50 GB/s: NVLink 4.5e8 / 450e9 = 1 ms, network 4.5e8 / 50e9 = 9 ms, at
     * once: the slower, 4.8e-6 + 9e-3 = 9.0048e-3 s */
    op.comm_intra_share = 0.5;
    cr_assert_float_eq(price_op(&op, &g, 0, 8, NULL), 9.0048e-3, 1e-15);
}

Test(price_op, roofline_terms_by_hand)
{
    /* 1e12 FLOP at 1 PFLOP/s: 1 ms; 4e9 B at 1 TB/s: 4 ms; the roofline is the larger */
    cr_assert_float_eq(compute_time(1e12, 1e15), 1e-3, 1e-18);
    cr_assert_float_eq(memory_time(4e9, 1e12), 4e-3, 1e-18);
    cr_assert_eq(roofline_time(1e12, 4e9, 1e15, 1e12, NULL), memory_time(4e9, 1e12));
}

Test(price_op, which_kinds_are_communication)
{
    op_cost op = {.name = "x", .comm_bytes = 1e6, .weight_bytes = 2, .kv_bytes = 3, .act_bytes = 4};
    const op_kind comm[] = {OP_ALLREDUCE, OP_ALLGATHER, OP_ALLTOALL, OP_P2P};
    for (size_t i = 0; i < sizeof comm / sizeof comm[0]; i++) {
        op.kind = comm[i];
        cr_assert(op_is_comm(&op), "kind %d", comm[i]);
    }
    const op_kind local[] = {OP_PROJECTION, OP_HOST_LOAD, OP_HBM_READ};
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++) {
        op.kind = local[i];
        cr_assert(!op_is_comm(&op), "kind %d", local[i]);
    }
    cr_assert_eq(op_bytes(&op), 9); /* 2 + 3 + 4: HBM bytes only, never comm_bytes */
}

/* The kinds without measured rates, each priced on row g. */
static void price_unrated_kinds(const gpu_spec *g, double out[5])
{
    const op_cost ops[5] = {
        {.name = "own_link", .kind = OP_P2P, .comm_bytes = 1e9, .link_bw = 50e9, .link_latency = 5e-6},
        {.name = "row_link", .kind = OP_P2P, .comm_bytes = 9e8},
        {.name = "host", .kind = OP_HOST_LOAD, .comm_bytes = 1.28e9},
        {.name = "hbm", .kind = OP_HBM_READ, .weight_bytes = 6.7e9},
        {.name = "a2a", .kind = OP_ALLTOALL, .comm_bytes = 9e8, .comm_intra_share = 0.5, .comm_net_bw = 50e9},
    };
    for (int i = 0; i < 5; i++)
        out[i] = price_op(&ops[i], g, gpu_peak_flops(g, DT_BF16), 8, NULL);
}

Test(price_op, a_calibrated_row_prices_the_unrated_kinds_as_the_roofline)
{
    gpu_spec roof = gpu_builtin("h100");
    double r[5], c[5];
    price_unrated_kinds(&roof, r);

    /* a calibration that rates every class and every TP curve, far from the roofline
     * (1 ms fixed cost, a tenth of each ceiling): had any of these kinds read it, it would show */
    rate_model all = {0};
    for (int k = 0; k < RC_COUNT; k++) {
        all.op[k] = (op_rate){.t0 = 1e-3, .flop_frac = 0.1, .byte_frac = 0.1, .blend = 1};
        all.has_op[k] = 1;
    }
    for (int s = 0; s < RATE_TP_SLOTS; s++) {
        all.allreduce[s] = (link_rate){1e-3, 1e9, 1e-3, 1e9};
        all.has_allreduce[s] = 1;
    }
    gpu_spec cal = roof;
    cal.rates = &all;
    price_unrated_kinds(&cal, c);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(c[i], r[i], "op %d: calibrated %.17g, roofline %.17g", i, c[i], r[i]);

    /* and the published calibration the commands attach */
    rate_model storage;
    gpu_spec pub = gpu_builtin_calibrated("h100", "published:h100_sxm/trtllm", &storage);
    cr_assert_not_null(pub.rates);
    price_unrated_kinds(&pub, c);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(c[i], r[i], "op %d: published %.17g, roofline %.17g", i, c[i], r[i]);

    /* while a GEMM on the same rows does change: the rates are in force */
    op_cost gemm = {.name = "gemm", .kind = OP_PROJECTION, .rate = RC_GEMM_BF16, .flop = 1e9, .weight_bytes = 1e6,
                    .fixed_share = 1};
    double peak = gpu_peak_flops(&roof, DT_BF16);
    cr_assert_neq(price_op(&gemm, &cal, peak, 1, NULL), price_op(&gemm, &roof, peak, 1, NULL));
}
