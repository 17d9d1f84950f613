/* the door's parts, price/'s own */
double price_part(double bytes, double bw);
