"""Bad inputs to the FedEM chapter's public functions and classes are rejected with errors naming the argument."""
from cases_fedem import CASES
from harness import make_tests

test_valid_call, test_edge_values, test_canonical_bad_values, test_drawn_bad_values = make_tests(CASES)
