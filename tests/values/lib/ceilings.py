"""Published measured ceilings: what code is reported to reach, against the
datasheet.  Inputs quoted with their source (the book's bibliography key
azure-benchmarking-guide): BabelStream on Azure ND H100 v5 reads at
3.18 TB/s and copies at 2.90 TB/s; on ND H200 v5, 4.48 and 4.01 TB/s."""

BABELSTREAM = {"h100": {"read": 3.18e12, "copy": 2.90e12},
               "h200": {"read": 4.48e12, "copy": 4.01e12}}
