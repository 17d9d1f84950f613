/* Shared-memory bank conflicts of decode attention's scratch writes and
 * reads, and BGMV v3's blocks per SM, on a host model.
 *
 * Banks: 32 banks of 4 bytes; a warp's access is served in phases (all
 * 32 lanes for 4-byte accesses, each half warp for 8-byte ones); within a
 * phase, the degree is the most distinct 4-byte words any one bank holds
 * (one word read by many lanes is a broadcast, not a conflict). */
#include <criterion/criterion.h>

#include "attn_v5_index.h"
#include "lora_ref.h"

/* word[l]: the first 4-byte word lane l touches; width 4 or 8 bytes. */
static int conflict_degree(const int word[32], const int active[32], int width)
{
    const int per_phase = width == 8 ? 16 : 32, words = width / 4;
    int worst = 0;
    for (int p0 = 0; p0 < 32; p0 += per_phase) {
        int seen[32][64], n[32] = {0};
        for (int l = p0; l < p0 + per_phase; l++) {
            if (!active[l])
                continue;
            for (int w = 0; w < words; w++) {
                const int a = word[l] + w, b = a % 32;
                int dup = 0;
                for (int k = 0; k < n[b]; k++)
                    dup |= seen[b][k] == a;
                if (!dup)
                    seen[b][n[b]++] = a;
            }
        }
        for (int b = 0; b < 32; b++)
            worst = n[b] > worst ? n[b] : worst;
    }
    return worst;
}

/* v5's P scratch: the four scalar writes (worst of them) and the two float2 reads. */
static int p_write_degree(int pstride)
{
    int worst = 0, word[32], on[32];
    for (int i = 0; i < 4; i++) {
        for (int l = 0; l < 32; l++)
            word[l] = attn_v5_p_write(l, i, pstride), on[l] = 1;
        const int d = conflict_degree(word, on, 4);
        worst = d > worst ? d : worst;
    }
    return worst;
}
static int p_read_degree(int pstride)
{
    int worst = 0, word[32], on[32];
    for (int k = 0; k < 2; k++) {
        for (int l = 0; l < 32; l++)
            word[l] = attn_v5_p_read(l, k, pstride), on[l] = 1;
        const int d = conflict_degree(word, on, 8);
        worst = d > worst ? d : worst;
    }
    return worst;
}

Test(smem_banks, v5_p_scratch_writes_are_free_and_reads_2_way_at_row_20)
{
    /* Writes at row 20: head 2t + i%2, position g (+8): word 40t + g (+20,
     * +8): t = 0..3 start in banks 0, 8, 16, 24, g adds 0..7: one lane a
     * bank.  Reads, lanes 0-15 (g = 0..3), 8 bytes at 20g + 2t: words 0-7,
     * 20-27, 40-47 (banks 8-15), 60-67 (banks 28-31, 0-3): banks 0-3 twice. */
    cr_assert_eq(p_write_degree(20), 1);
    cr_assert_eq(p_read_degree(20), 2);
    /* No row length from 16 to 48 makes both free (writes need 2S = 8 or
     * 24 mod 32, reads S = 8 or 24 mod 32): the comment in the kernel. */
    for (int s = 16; s <= 48; s++)
        cr_assert(p_write_degree(s) > 1 || p_read_degree(s) > 1, "row %d frees both", s);
}

/* v5's end-of-split write-out: lane (g, t) writes dim 16j + g (+8) of head 2t + h. */
static int wacc_write_degree(int G, int wrow)
{
    int worst = 0, word[32], on[32];
    for (int i = 0; i < 4; i++) {
        for (int l = 0; l < 32; l++) {
            const int head = attn_v5_acc_head(l, i);
            on[l] = head < G;
            word[l] = attn_v5_wacc(1, on[l] ? head : 0, G, attn_v5_acc_dim(l, 3, i), wrow);
        }
        const int d = conflict_degree(word, on, 4);
        worst = d > worst ? d : worst;
    }
    return worst;
}

Test(smem_banks, v5_write_out_is_conflict_free_with_rows_of_132)
{
    /* Rows of 128 floats: head 2t starts in bank 0 for every t, so the 4
     * values of t share banks g: 4-way at G = 8 (t = 0..3 active), 2-way at
     * G = 4 (t = 0, 1).  Rows of 132: head 2t starts 264t = 8t (mod 32):
     * banks 8t + g, one lane a bank. */
    cr_assert_eq(wacc_write_degree(8, 128), 4);
    cr_assert_eq(wacc_write_degree(4, 128), 2);
    cr_assert_eq(wacc_write_degree(8, 132), 1);
    cr_assert_eq(wacc_write_degree(4, 132), 1);
}

/* v3's tensor-core score writes: ps[head * row + pos], head 2t + i%2, pos g (+8). */
static int v3_score_degree(int G, int row)
{
    int worst = 0, word[32], on[32];
    for (int i = 0; i < 4; i++) {
        for (int l = 0; l < 32; l++) {
            const int head = 2 * (l & 3) + (i & 1), pos = (l >> 2) + (i >= 2 ? 8 : 0);
            on[l] = head < G;
            word[l] = head * row + pos;
        }
        const int d = conflict_degree(word, on, 4);
        worst = d > worst ? d : worst;
    }
    return worst;
}

Test(smem_banks, v3_score_writes_are_conflict_free_with_rows_of_68)
{
    /* Rows of 64: 2t x 64 = 0 (mod 32), banks g only: 4-way at G = 8,
     * 2-way at G = 4.  Rows of 68: 136t = 8t (mod 32): free. */
    cr_assert_eq(v3_score_degree(8, 64), 4);
    cr_assert_eq(v3_score_degree(4, 64), 2);
    cr_assert_eq(v3_score_degree(8, 68), 1);
    cr_assert_eq(v3_score_degree(4, 68), 1);
}

Test(bgmv_occupancy, v3_plans_for_the_blocks_its_shared_memory_lets_reside)
{
    /* H200: 228 KB (233472 bytes) of shared memory an SM, 1 KB of it
     * reserved per block, 132 SMs.  LLaMA-3-70B's q: d_in 8192.  A group of
     * 8 tokens stages 8 x 8192 x 2 = 131072 bytes: 233472 / (131072 + 1024
     * + the static 2 KB of vs and tok) = 1.7, one block an SM; one token,
     * 16384 bytes: 233472 / 19488 = 11, so two fit. */
    cr_assert_eq(lora_bgmv_fused_smem_bytes(8, 8192), 131072);
    cr_assert_eq(lora_bgmv_fused_smem_bytes(1, 8192), 16384);
    cr_assert_eq(lora_bgmv_fused_smem_bytes(0, 8192), 0);
    const int per_sm_8 = 233472 / (131072 + 1024 + 2080), per_sm_1 = 233472 / (16384 + 1024 + 2080);
    cr_assert_eq(per_sm_8, 1);
    cr_assert_geq(per_sm_1, 2);
    /* Batch 64 on 8 adapters: 8 groups of 8 tokens.  Planned for one block
     * an SM (132 resident): ceil(132 / 8) = 17 wanted, 8192 / 256 = 32 at
     * most: 17 blocks a group of ceil(8192 / 17) = 482 columns, 8 x 17 = 136
     * blocks for 132 slots (4 in a short tail, the plan rounds up); 2 an
     * SM as before (264): 33 wanted, 32 the most, 256 blocks: two waves
     * at one block an SM. */
    int cols;
    int n1 = lora_bgmv_column_splits_resident(8, 8192, 132 * per_sm_8, 256, &cols);
    cr_assert_eq(n1, 17);
    cr_assert_eq(cols, 482);
    int n2 = lora_bgmv_column_splits(8, 8192, 132, 256, &cols);
    cr_assert_eq(n2, 32);
    cr_assert_eq(lora_bgmv_column_splits_resident(8, 8192, 0, 256, &cols), -1);
}
