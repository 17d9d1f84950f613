/* core: the lowest floor */
double units_seconds(double s);
