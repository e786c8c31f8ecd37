"""Theory calculators: pure numpy/cvxpy functions, one module per chapter, equations numbered as in the thesis."""
