# Fixture figure script; the tests place a rendered stand-in beside it.
plot x
