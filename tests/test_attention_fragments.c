/* Decode attention v5's fragment mapping, lane by lane, on the host.  The
 * kernel's own index expressions (code/napkin/ref/attn_v5_index.h, which
 * kernels/decode_attention.cu includes) drive an emulation of ldmatrix,
 * ldmatrix.trans and mma.m16n8k16 written here from the PTX ISA's
 * ownership rules (PTX ISA, "Matrix fragments for mma.m16n8k16" and
 * "ldmatrix"): with g = lane / 4 and t = lane % 4,
 *   A (16 x 16, bf16): a0 = A[g][2t, 2t+1], a1 = A[g+8][2t, 2t+1],
 *                      a2 = A[g][2t+8, +9], a3 = A[g+8][2t+8, +9]
 *   B (16 x 8):        b0 = B[2t, 2t+1][g], b1 = B[2t+8, +9][g]
 *   C, D (16 x 8):     c0, c1 = C[g][2t, 2t+1], c2, c3 = C[g+8][2t, 2t+1]
 *   ldmatrix .x4:      lanes 8m ... 8m+7 give the rows of matrix m (8 b16
 *                      each); register m of lane l holds row l/4, columns
 *                      2(l%4), +1 of matrix m; with .trans, column l/4,
 *                      rows 2(l%4), +1 (the transpose's row l/4).
 * Values are small integers, so every sum is exact and the check is
 * equality.  One tile of one warp: the copy into the ring slot, the scores
 * S = K q^T, P through the scratch as the B operand, O^T += V^T P^T, and the
 * write-out to the merge scratch, read back as the block reads it.  A
 * mapping with one swapped index (the K address's matrix bits, the P
 * read's lane fields, the V address's matrix bits) must fail. */
#include <criterion/criterion.h>
#include <string.h>

#include "attn_v5_index.h"

enum { D = 128, ROWS = 16, KROW = D + 8, PSTRIDE = 20, WROW = D + 4, HEADS = 8 };

/* The index expressions under test: the header's, or a mutant's. */
typedef struct {
    int (*k_ldsm)(int lane, int krow);
    int (*v_ldsm)(int lane, int krow);
    int (*p_read)(int lane, int k, int pstride);
} mapping;

static int k_ldsm_swapped(int lane, int krow) /* matrix bits swapped: dims 8-15 before rows 8-15 */
{
    const int mi = lane >> 3, mr = lane & 7;
    return (mr + 8 * (mi >> 1)) * krow + 8 * (mi & 1);
}
static int v_ldsm_swapped(int lane, int krow)
{
    const int mi = lane >> 3, mr = lane & 7;
    return (mr + 8 * (mi & 1)) * krow + 8 * (mi >> 1);
}
static int p_read_swapped(int lane, int k, int pstride) /* g and t swapped */
{
    return (lane & 3) * pstride + 2 * (lane >> 2) % 16 + 8 * k;
}

/* ldmatrix.x4 (trans or not) from a slot of `float` elements standing for
 * bf16: reg[lane][m][0..1], the two b16 halves of register m. */
static void ldmatrix_x4(const float *slot, int (*addr)(int, int), int st_offset, int trans, float reg[32][4][2])
{
    float mat[4][8][8];
    for (int m = 0; m < 4; m++)
        for (int r = 0; r < 8; r++) {
            const float *row = slot + addr(8 * m + r, KROW) + st_offset;
            for (int c = 0; c < 8; c++)
                mat[m][r][c] = row[c];
        }
    for (int l = 0; l < 32; l++)
        for (int m = 0; m < 4; m++)
            for (int h = 0; h < 2; h++)
                reg[l][m][h] = trans ? mat[m][2 * (l % 4) + h][l / 4] : mat[m][l / 4][2 * (l % 4) + h];
}

/* mma.m16n8k16: D = A B + C from the 32 lanes' fragments. */
static void mma_16816(const float a[32][4][2], const float b[32][2][2], float c[32][4])
{
    float A[16][16], B[16][8];
    for (int l = 0; l < 32; l++) {
        const int g = l / 4, t = l % 4;
        for (int h = 0; h < 2; h++) {
            A[g][2 * t + h] = a[l][0][h];
            A[g + 8][2 * t + h] = a[l][1][h];
            A[g][2 * t + 8 + h] = a[l][2][h];
            A[g + 8][2 * t + 8 + h] = a[l][3][h];
            B[2 * t + h][g] = b[l][0][h];
            B[2 * t + 8 + h][g] = b[l][1][h];
        }
    }
    for (int l = 0; l < 32; l++) {
        const int g = l / 4, t = l % 4;
        for (int i = 0; i < 4; i++) {
            const int row = g + 8 * (i >> 1), col = 2 * t + (i & 1);
            double s = 0;
            for (int k = 0; k < 16; k++)
                s += (double)A[row][k] * B[k][col];
            c[l][i] += (float)s;
        }
    }
}

/* The whole tile for G heads; returns the number of elements out of place. */
static int emulate_tile(const mapping *mp, int G)
{
    static float K[ROWS][D], V[ROWS][D], q[HEADS][D], P[HEADS][ROWS];
    static float kslot[ROWS * KROW], vslot[ROWS * KROW], pscr[8 * PSTRIDE], wacc[HEADS * WROW];
    int bad = 0;
    for (int p = 0; p < ROWS; p++)
        for (int d = 0; d < D; d++) {
            K[p][d] = (float)((p * 7 + d * 3) % 5 - 2);
            V[p][d] = (float)((p * 5 + d * 11) % 7 - 3);
        }
    for (int h = 0; h < HEADS; h++)
        for (int d = 0; d < D; d++)
            q[h][d] = h < G ? (float)((h * 13 + d * 5) % 9 - 4) : 0.f;
    for (int h = 0; h < HEADS; h++)
        for (int p = 0; p < ROWS; p++)
            P[h][p] = (float)(h * 16 + p + 1); /* distinct: a misplaced one shows */

    /* The copy: every 16-byte chunk of the slot written once. */
    int written[ROWS][D / 8];
    memset(written, 0, sizeof written);
    for (int x = 0; x < ROWS * KROW; x++)
        kslot[x] = vslot[x] = -1000.f; /* the pad columns: never read */
    for (int l = 0; l < 32; l++)
        for (int i = 0; i < ROWS / 2; i++) {
            const int r = attn_v5_copy_row(l, i), c = attn_v5_copy_col(l);
            written[r][c / 8]++;
            for (int e = 0; e < 8; e++) {
                kslot[r * KROW + c + e] = K[r][c + e];
                vslot[r * KROW + c + e] = V[r][c + e];
            }
        }
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < D / 8; c++)
            bad += written[r][c] != 1;

    /* Scores: c[lane][i] must be K[pos] . q[head] for the kernel's (pos, head). */
    float c[32][4];
    memset(c, 0, sizeof c);
    for (int st = 0; st < D / 16; st++) {
        float a[32][4][2], b[32][2][2];
        ldmatrix_x4(kslot, mp->k_ldsm, st * 16, 0, a);
        for (int l = 0; l < 32; l++)
            for (int r = 0; r < 2; r++)
                for (int h = 0; h < 2; h++)
                    b[l][r][h] = q[l / 4][attn_v5_q_dim(l, st, r) + h];
        mma_16816(a, b, c);
    }
    for (int l = 0; l < 32; l++)
        for (int i = 0; i < 4; i++) {
            const int pos = attn_v5_score_pos(l, i), head = attn_v5_score_head(l, i);
            double s = 0;
            for (int d = 0; d < D; d++)
                s += (double)K[pos][d] * q[head][d];
            bad += c[l][i] != (float)s;
        }

    /* P: each lane writes its probabilities (the kernel's s[i], of score
     * (pos, head) as above) and reads P^T's B fragments back. */
    for (int x = 0; x < 8 * PSTRIDE; x++)
        pscr[x] = -2000.f;
    for (int l = 0; l < 32; l++)
        for (int i = 0; i < 4; i++)
            pscr[attn_v5_p_write(l, i, PSTRIDE)] = P[attn_v5_score_head(l, i)][attn_v5_score_pos(l, i)];
    float pb[32][2][2];
    for (int l = 0; l < 32; l++)
        for (int k = 0; k < 2; k++)
            for (int h = 0; h < 2; h++)
                pb[l][k][h] = pscr[mp->p_read(l, k, PSTRIDE) + h];

    /* O^T += V^T P^T per 16 dims; then the write-out and the block's read. */
    for (int x = 0; x < HEADS * WROW; x++)
        wacc[x] = -3000.f;
    for (int j = 0; j < D / 16; j++) {
        float a[32][4][2], acc[32][4];
        memset(acc, 0, sizeof acc);
        ldmatrix_x4(vslot, mp->v_ldsm, j * 16, 1, a);
        mma_16816(a, pb, acc);
        for (int l = 0; l < 32; l++)
            for (int i = 0; i < 4; i++) {
                const int head = attn_v5_acc_head(l, i), dim = attn_v5_acc_dim(l, j, i);
                if (head < G)
                    wacc[attn_v5_wacc(0, head, G, dim, WROW)] = acc[l][i];
            }
    }
    for (int head = 0; head < G; head++)
        for (int tid = 0; tid < D; tid++) {
            double o = 0;
            for (int p = 0; p < ROWS; p++)
                o += (double)V[p][tid] * P[head][p];
            bad += wacc[attn_v5_wacc(0, head, G, tid, WROW)] != (float)o;
        }
    return bad;
}

static const mapping kernel_mapping = {attn_v5_k_ldsm, attn_v5_v_ldsm, attn_v5_p_read};

Test(attention_fragments, v5_puts_every_element_where_the_kernel_assumes)
{
    cr_assert_eq(emulate_tile(&kernel_mapping, 4), 0, "G = 4: elements out of place");
    cr_assert_eq(emulate_tile(&kernel_mapping, 8), 0, "G = 8: elements out of place");
}

Test(attention_fragments, one_swapped_index_fails)
{
    mapping m = kernel_mapping;
    m.k_ldsm = k_ldsm_swapped;
    cr_assert_gt(emulate_tile(&m, 8), 0, "K's ldmatrix matrix bits swapped: the emulation must see it");
    m = kernel_mapping;
    m.v_ldsm = v_ldsm_swapped;
    cr_assert_gt(emulate_tile(&m, 8), 0, "V's ldmatrix.trans matrix bits swapped: the emulation must see it");
    m = kernel_mapping;
    m.p_read = p_read_swapped;
    cr_assert_gt(emulate_tile(&m, 4), 0, "P read with g and t swapped: the emulation must see it");
}
