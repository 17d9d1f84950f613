/* a folder the checker has no rule for */
int old(void);
