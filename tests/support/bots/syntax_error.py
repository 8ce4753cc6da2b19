"""Does not even compile."""
def broken(:
