"""Bad inputs to the exercise checkers, the full-scale records and the engine's replicas name the argument."""
from cases_workbook import CASES
from harness import make_tests

test_valid_call, test_edge_values, test_canonical_bad_values, test_drawn_bad_values = make_tests(CASES)
