"""N concurrent conversations through the whole product: see `python -m bench.load --help`."""
