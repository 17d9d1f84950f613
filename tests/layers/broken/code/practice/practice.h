/* the exercises: not a floor of the library */
int practice_build(void);
