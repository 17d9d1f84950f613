"""Shared formulas of the second derivation, one module per topic (see
tests/values/README.md).  Standard library only; nothing here imports or
runs project code."""
