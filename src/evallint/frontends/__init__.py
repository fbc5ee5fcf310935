"""Front-ends: turn one file of a given kind into typed facts."""
