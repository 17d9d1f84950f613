/* Chapter 6: what popularity does to the number of distinct adapters in a
 * batch, and to a batch that has fewer slots than adapters.  Three hundred
 * adapters; uniform and Zipf popularity (s = 0.8, 1.0, 1.2); the exact
 * expectation sum_i 1 - (1 - p_i)^B beside a simulation (rng.h, fixed seed).
 *
 * Writes 06-popularity.tsv (expected distinct adapters against batch),
 * 06-popularity-sim.tsv (simulated means with their standard deviation, Zipf
 * 1.0) and the values the chapter quotes. */
#include "lora.h"
#include "notebook.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { ADAPTERS = 300, TRIALS = 4000 };

static lora_batch_sim simulate(double s, int batch, int slots)
{
    lora_batch_sim r;
    char err[256];
    if (lora_distinct_simulate(ADAPTERS, s, batch, slots, TRIALS, 2026, &r, err, sizeof err) != 0) {
        fprintf(stderr, "popularity: %s\n", err);
        exit(1);
    }
    return r;
}

int main(void)
{
    const double zipf[] = {0.8, 1.0, 1.2};
    static double p[3][ADAPTERS];
    for (int k = 0; k < 3; k++)
        lora_zipf_probs(ADAPTERS, zipf[k], p[k]);
    FILE *f = nb_data_open("06-popularity.tsv");
    fprintf(f, "batch\tuniform\tzipf08\tzipf10\tzipf12\n");
    for (int b = 1; b <= 256; b = b == 256 ? 257 : b < 8 ? b + 1 : b + b / 8 > 256 ? 256 : b + b / 8) {
        fprintf(f, "%d\t%.4f", b, lora_expected_distinct_uniform(ADAPTERS, b));
        for (int k = 0; k < 3; k++)
            fprintf(f, "\t%.4f", lora_expected_distinct(p[k], ADAPTERS, b));
        fprintf(f, "\n");
    }
    fclose(f);
    FILE *g = nb_data_open("06-popularity-sim.tsv");
    fprintf(g, "batch\tmean\tstddev\n");
    for (int b = 4; b <= 256; b *= 2) {
        lora_batch_sim r = simulate(1.0, b, 0);
        fprintf(g, "%d\t%.4f\t%.4f\n", b, r.mean, r.stddev);
    }
    fclose(g);

    nb_value("ch06_pop_adapters", "%d", ADAPTERS);
    nb_value("ch06_pop_uniform_b64", "%.1f", lora_expected_distinct_uniform(ADAPTERS, 64));
    nb_value("ch06_pop_zipf1_b64", "%.1f", lora_expected_distinct(p[1], ADAPTERS, 64));
    nb_value("ch06_pop_zipf12_b64", "%.1f", lora_expected_distinct(p[2], ADAPTERS, 64));
    nb_value("ch06_pop_uniform_b256", "%.0f", lora_expected_distinct_uniform(ADAPTERS, 256));
    nb_value("ch06_pop_zipf1_b256", "%.0f", lora_expected_distinct(p[1], ADAPTERS, 256));
    lora_batch_sim z = simulate(1.0, 64, 0);
    nb_value("ch06_pop_sim_zipf1_b64", "%.1f", z.mean);
    nb_value("ch06_pop_sim_zipf1_b64_sd", "%.1f", z.stddev);
    nb_value("ch06_pop_trials", "%d", TRIALS);
    nb_value("ch06_pop_top8_zipf1_pct", "%.0f",
             100 * (p[1][0] + p[1][1] + p[1][2] + p[1][3] + p[1][4] + p[1][5] + p[1][6] + p[1][7]));

    /* Slots below the distinct count: a batch of 64 queued requests, taken in
     * order, a request waiting when its adapter would need a ninth slot. */
    lora_batch_sim u8 = simulate(0.0, 64, 8), z8 = simulate(1.0, 64, 8);
    nb_value("ch06_slots8_uniform_admitted", "%.1f", u8.admitted);
    nb_value("ch06_slots8_zipf1_admitted", "%.1f", z8.admitted);
    /* the fewest slots that admit 95% of the 64 on average, Zipf 1.0 */
    int need = 0;
    for (int s = 1; s <= 64 && !need; s++)
        if (simulate(1.0, 64, s).admitted >= 0.95 * 64)
            need = s;
    nb_value("ch06_slots_95_zipf1", "%d", need);
    int need_u = 0;
    for (int s = 1; s <= 64 && !need_u; s++)
        if (simulate(0.0, 64, s).admitted >= 0.95 * 64)
            need_u = s;
    nb_value("ch06_slots_95_uniform", "%d", need_u);
    return 0;
}
