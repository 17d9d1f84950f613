/* The second file that opens snippet "shared" (chapters/90-snippet-two-files.md). */
//> shared
int another_copy;
//< shared
