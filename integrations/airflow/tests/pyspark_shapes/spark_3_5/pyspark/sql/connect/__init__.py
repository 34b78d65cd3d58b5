"""Stand-in package (tests/pyspark_shapes)."""
