/* a source in no floor: the checker names it */
int stray(void);
