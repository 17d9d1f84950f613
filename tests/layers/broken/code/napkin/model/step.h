/* model: above price */
double step_seconds(void);
