# why: a syntax error: the module does not compile, so nothing is defined
# earns: nothing
# feedback: SyntaxError


def broken(:
    pass
