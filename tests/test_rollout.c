/* Per-class speculation switch: thresholds, hysteresis, evidence, and the
 * predicted speedup it acts on. */
#include "rollout.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

Test(rollout, thresholds)
{
    rollout_policy p = rollout_policy_default(); /* on at >= 1.10, off below 1.00, 1000 rounds */
    cr_assert_eq(rollout_next_state(&p, 0, 1.10, 1000), 1);
    cr_assert_eq(rollout_next_state(&p, 0, 1.09, 1000), 0);  /* inside the band: stays off */
    cr_assert_eq(rollout_next_state(&p, 1, 1.01, 1000), 1);  /* inside the band: stays on */
    cr_assert_eq(rollout_next_state(&p, 1, 0.99, 1000), 0);
    cr_assert_eq(rollout_next_state(&p, 0, 3.00, 999), 0);   /* too little evidence to switch on */
    cr_assert_eq(rollout_next_state(&p, 1, 0.50, 10), 0);    /* a loss switches off at once */
}

Test(rollout, no_flapping_inside_the_band)
{
    /* A speedup wobbling between 1.02 and 1.08 never crosses either threshold:
     * whichever state the class starts in, it keeps. */
    rollout_policy p = rollout_policy_default();
    for (int start = 0; start <= 1; start++) {
        int on = start;
        for (int i = 0; i < 1000; i++)
            on = rollout_next_state(&p, on, i % 2 ? 1.02 : 1.08, 5000);
        cr_assert_eq(on, start);
    }
    /* without the band (on and off at 1.05) the same wobble flips every time */
    rollout_policy q = p;
    q.on_above = 1.05;
    q.off_below = 1.05;
    int on = 0, flips = 0;
    for (int i = 0; i < 100; i++) {
        int next = rollout_next_state(&q, on, i % 2 ? 1.02 : 1.08, 5000);
        flips += next != on;
        on = next;
    }
    cr_assert_eq(flips, 100);
}

static model_spec target;
static gpu_spec h100;
static void load(void)
{
    target = model_builtin("llama3-70b");
    h100 = gpu_builtin("h100");
}
TestSuite(classes, .init = load);

Test(classes, decisions_follow_the_predicted_speedup)
{
    /* A free draft (c = 0) at batch 1 where verification costs about one step
     * (under 1% more, see test_specdec): predicted speedup ~ E[N].
     *  alpha 0.8, gamma 4: E[N] = 3.3616 -> on;
     *  alpha 0.05: E[N] = 1 + .05 + .0025 + ... = 1.0526 -> inside the band;
     *  alpha 0: E[N] = 1 and verification costs a little more than a step -> off. */
    rollout_policy p = rollout_policy_default();
    spec_setup s = spec_setup_default(&target, NULL, &h100, 4, 1, 4096);
    rollout_class chat = {0}, code = {0};
    char err[256];
    cr_assert_eq(rollout_update(&p, &s, &chat, 0.8, 5000, 1, err, sizeof err), 1, "%s", err);
    cr_assert(fabs(chat.predicted - 3.3616) < 0.04);
    cr_assert_eq(chat.switches, 1);
    /* the class's alpha sags into the band: it stays on */
    cr_assert_eq(rollout_update(&p, &s, &chat, 0.05, 5000, 1, err, sizeof err), 1);
    /* and falls to nothing: off */
    cr_assert_eq(rollout_update(&p, &s, &chat, 0.0, 5000, 1, err, sizeof err), 0);
    cr_assert(chat.predicted < 1.0);
    cr_assert_eq(chat.switches, 2);
    /* a class never switched on stays off inside the band */
    cr_assert_eq(rollout_update(&p, &s, &code, 0.05, 5000, 1, err, sizeof err), 0);
    cr_assert_eq(code.switches, 0);
}

Test(classes, busy_batch_turns_speculation_off)
{
    /* Draft cost c = 0.3 target steps, alpha 0.8, gamma 4: at batch 1 the
     * speedup is about 3.3616 / 2.2 = 1.53 (on).  At batch 4096 with a short
     * context verification costs more than 4.5 steps (test_specdec), so the
     * speedup is below 3.3616 / (1.2 + 4.5) = 0.59: off. */
    rollout_policy p = rollout_policy_default();
    spec_setup s = spec_setup_default(&target, NULL, &h100, 8, 1, 1);
    s.draft_c = 0.3;
    rollout_class cls = {0};
    char err[256];
    cr_assert_eq(rollout_update(&p, &s, &cls, 0.8, 5000, 1, err, sizeof err), 1, "%s", err);
    cr_assert(fabs(cls.predicted - 3.3616 / 2.2) < 0.03);
    cr_assert_eq(rollout_update(&p, &s, &cls, 0.8, 5000, 4096, err, sizeof err), 0);
    cr_assert(cls.predicted < 0.59);
}

Test(classes, bad_policy_or_input)
{
    rollout_policy p = rollout_policy_default();
    p.off_below = 1.2; /* above on_above: no band */
    spec_setup s = spec_setup_default(&target, NULL, &h100, 4, 1, 4096);
    rollout_class cls = {0};
    char err[256] = "";
    cr_assert_eq(rollout_update(&p, &s, &cls, 0.8, 5000, 1, err, sizeof err), -1);
    cr_assert(strstr(err, "off_below") != NULL);
    p = rollout_policy_default();
    cr_assert_eq(rollout_update(&p, &s, &cls, 0.8, 5000, 0, err, sizeof err), -1);
    cr_assert_eq(rollout_update(&p, &s, &cls, 1.7, 5000, 1, err, sizeof err), -1);
}
