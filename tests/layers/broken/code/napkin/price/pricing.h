/* the door */
double price_seconds(double bytes);
