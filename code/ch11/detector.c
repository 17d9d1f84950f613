/* Chapter 11: the acceptance-rate CUSUM on a simulated regression.  Rounds
 * of gamma 4 drafts; alpha 0.8 for the first 2000 rounds, then 0.6.  The
 * detector is designed for 0.8 -> 0.6 with ARL0 = 1e8 rounds.
 *
 * Writes 11-detector.tsv (round, accepted, CUSUM statistic, threshold,
 * running acceptance estimate over the last 200 rounds) and the design and
 * outcome values; also the false-alarm and delay statistics of many runs. */
#include "notebook.h"
#include "rng.h"
#include "specmon.h"

#include <math.h>
#include <stdio.h>

enum { GAMMA = 4, CHANGE = 2000, ROUNDS = 2400, WINDOW = 200, TRIALS = 2000 };
#define ALPHA0 0.8
#define ALPHA1 0.6
#define ARL0 1e8

static int draw_round(rng_state *r, double alpha)
{
    int k = 0;
    while (k < GAMMA && rng_uniform(r) < alpha)
        k++;
    return k;
}

int main(void)
{
    cusum_design d;
    if (cusum_design_make(ALPHA0, ALPHA1, GAMMA, ARL0, &d) != 0) {
        fprintf(stderr, "detector: bad design\n");
        return 1;
    }
    nb_value("ch11_cusum_h", "%.1f", d.threshold);
    nb_value("ch11_cusum_llr0", "%.3f", cusum_llr(&d, 0));
    nb_value("ch11_cusum_llr4", "%.3f", cusum_llr(&d, GAMMA));
    nb_value("ch11_cusum_drift0", "%.3f", cusum_drift(&d, ALPHA0));
    nb_value("ch11_cusum_drift1", "%.3f", cusum_drift(&d, ALPHA1));
    nb_value("ch11_cusum_delay_bound", "%.0f", cusum_delay_bound(&d, ALPHA1));
    nb_value("ch11_cusum_delay_approx", "%.0f", cusum_delay_approx(&d, ALPHA1));
    /* a false alarm per 1e8 rounds, at 1000 rounds per second */
    nb_value("ch11_arl0_hours", "%.0f", cusum_arl0_bound(d.threshold) / 1000.0 / 3600.0);
    /* ten times fewer false alarms: h grows by ln 10, the delay by ln 10 / I1 */
    nb_value("ch11_delay_per_decade", "%.0f", log(10.0) / cusum_drift(&d, ALPHA1));
    nb_value("ch11_cusum_delay_bound_07", "%.0f", cusum_delay_bound(&d, 0.7));

    /* one trace for the figure */
    rng_state r = rng_make(2024);
    cusum_state st;
    cusum_init(&st);
    FILE *f = nb_data_open("11-detector.tsv");
    fprintf(f, "# gamma %d, alpha %.1f -> %.1f at round %d; CUSUM designed for ARL0 %.0e, h = %.3f\n", GAMMA,
            ALPHA0, ALPHA1, CHANGE, ARL0, d.threshold);
    fprintf(f, "round\taccepted\tcusum\tthreshold\talpha_window\n");
    int window[WINDOW] = {0}, rej[WINDOW] = {0};
    long acc_sum = 0, rej_sum = 0, alarm_round = 0;
    for (int i = 1; i <= ROUNDS; i++) {
        int a = draw_round(&r, i <= CHANGE ? ALPHA0 : ALPHA1);
        int slot = i % WINDOW;
        acc_sum += a - window[slot];
        rej_sum += (a < GAMMA) - rej[slot];
        window[slot] = a;
        rej[slot] = a < GAMMA;
        double s_before = st.s + cusum_llr(&d, a);
        int alarm = cusum_update(&d, &st, a);
        if (alarm && !alarm_round)
            alarm_round = i;
        /* plot the value that crossed, not the restart at 0 */
        double shown = alarm ? s_before : st.s;
        double alpha_hat = i >= WINDOW ? (double)acc_sum / (acc_sum + rej_sum) : NAN;
        fprintf(f, "%d\t%d\t%.4f\t%.4f\t%.4f\n", i, a, shown, d.threshold, alpha_hat);
    }
    fclose(f);
    nb_value("ch11_trace_alarm_round", "%ld", alarm_round);
    nb_value("ch11_trace_delay", "%ld", alarm_round - CHANGE);
    nb_value("ch11_change_round", "%d", CHANGE);

    /* many regressions: mean and worst delay; and alarms on a steady million */
    double total = 0.0;
    long worst = 0, early = 0;
    rng_state r2 = rng_make(77);
    for (int t = 0; t < TRIALS; t++) {
        cusum_init(&st);
        for (int i = 0; i < CHANGE; i++)
            cusum_update(&d, &st, draw_round(&r2, ALPHA0));
        early += st.alarms;
        long delay = 0;
        long before = st.alarms;
        while (st.alarms == before) {
            cusum_update(&d, &st, draw_round(&r2, ALPHA1));
            delay++;
        }
        total += delay;
        if (delay > worst)
            worst = delay;
    }
    nb_value("ch11_trials", "%d", TRIALS);
    nb_value("ch11_mean_delay", "%.0f", total / TRIALS);
    nb_value("ch11_worst_delay", "%ld", worst);
    nb_value("ch11_early_alarms", "%ld", early);
    cusum_init(&st);
    for (long i = 0; i < 1000000; i++)
        cusum_update(&d, &st, draw_round(&r2, ALPHA0));
    nb_value("ch11_steady_alarms", "%ld", st.alarms);
    return 0;
}
